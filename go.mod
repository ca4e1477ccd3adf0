module github.com/workgang/workgang

// The go directive is the lowest the tree allows: the code needs go1.23
// (package iter, range-over-func); tests need go1.24 (testing.B.Loop, weak).
// x/sys is the newest version whose own go directive is at most go1.24, so it
// never raises the floor. Peer libraries and plotting live in the perf and
// examples modules (see go.work), not here.
go 1.24.0

require (
	github.com/stretchr/testify v1.12.1
	go.uber.org/goleak v1.3.0
	golang.org/x/sys v0.41.0
)

require go.yaml.in/yaml/v3 v3.0.5 // indirect
