module github.com/workgang/workgang/perf

// The perf tool and the peer benchmarks: go+WaitGroup and errgroup peers,
// gonum plot for -svg. Current golang.org/x/image and x/text (pulled in by the
// plotting) need go1.26.
go 1.26.0

require (
	github.com/panjf2000/ants/v2 v2.12.1
	github.com/sourcegraph/conc v0.3.0
	github.com/stretchr/testify v1.12.1
	github.com/workgang/workgang v0.0.0
	github.com/workgang/workgang/examples v0.0.0
	go.uber.org/goleak v1.3.0
	golang.org/x/sync v0.25.0
	golang.org/x/sys v0.50.0
	gonum.org/v1/plot v0.17.0
)

require (
	codeberg.org/go-fonts/liberation v0.6.0 // indirect
	codeberg.org/go-latex/latex v0.3.0 // indirect
	codeberg.org/go-pdf/fpdf v0.12.0 // indirect
	git.sr.ht/~sbinet/gg v0.8.0 // indirect
	github.com/ajstarks/svgo v0.0.0-20211024235047-1546f124cd8b // indirect
	github.com/golang/freetype v0.0.0-20170609003504-e2365dfdc4a0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/image v0.48.0 // indirect
	golang.org/x/text v0.44.0 // indirect
)

// The library and the examples are always the ones in this repository, also
// with GOWORK=off.
replace (
	github.com/workgang/workgang => ../
	github.com/workgang/workgang/examples => ../examples
)
