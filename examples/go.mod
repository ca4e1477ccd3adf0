module github.com/workgang/workgang/examples

// The examples use x/sync's errgroup as the peer their parallel phases are
// compared with. The current x/sync needs go1.26, which is also what the perf
// module (which imports these examples) needs.
go 1.26.0

require (
	github.com/stretchr/testify v1.12.1
	github.com/workgang/workgang v0.0.0
	go.uber.org/goleak v1.3.0
	golang.org/x/sync v0.25.0
)

require (
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sys v0.41.0 // indirect
)

// The library is always the one in this repository, also with GOWORK=off.
replace github.com/workgang/workgang => ../
