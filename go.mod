module github.com/workgang/workgang

// The go directive is the lowest the tree allows: the code needs go1.23
// (package iter, range-over-func); tests need go1.24 (testing.B.Loop, weak)
// and go1.25 (sync.WaitGroup.Go in semaphore/bench_test.go). The x/sys and
// x/sync versions are the newest whose own go directive is at most go1.24, so
// they never raise the floor.
go 1.25.0

require (
	github.com/stretchr/testify v1.12.1
	go.uber.org/goleak v1.3.0
	golang.org/x/sync v0.19.0
	golang.org/x/sys v0.41.0
)

require go.yaml.in/yaml/v3 v3.0.5 // indirect
