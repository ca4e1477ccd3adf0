module github.com/workgang/workgang

// The go directive is the lowest the tree allows: the code needs go1.23
// (package iter, range-over-func); tests need go1.24 (testing.B.Loop, weak).
// The x/sys and x/sync versions are the newest whose own go directive is at
// most go1.24, and gonum.org/v1/plot v0.12.0 (perf only) says go1.18, so
// they never raise the floor.
go 1.24.0

require (
	github.com/stretchr/testify v1.12.1
	go.uber.org/goleak v1.3.0
	golang.org/x/sync v0.19.0
	golang.org/x/sys v0.41.0
	gonum.org/v1/plot v0.12.0
)

require (
	git.sr.ht/~sbinet/gg v0.3.1 // indirect
	github.com/ajstarks/svgo v0.0.0-20211024235047-1546f124cd8b // indirect
	github.com/go-fonts/liberation v0.2.0 // indirect
	github.com/go-latex/latex v0.0.0-20210823091927-c0d11ff05a81 // indirect
	github.com/go-pdf/fpdf v0.6.0 // indirect
	github.com/golang/freetype v0.0.0-20170609003504-e2365dfdc4a0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/image v0.0.0-20220902085622-e7cb96979f69 // indirect
	golang.org/x/text v0.3.7 // indirect
)
