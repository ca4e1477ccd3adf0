package workloads

// The reasons of the examples' targets.
const (
	reasonHTTPD  = "a set shared by a server's requests must serve concurrent requests at least as well as not sharing, and speed up a lone request"
	reasonShared = "thousands of library instances on one shared set must cost no more time than running their jobs serially or on sets of their own, and less memory than the latter"
	reasonPow    = "a first call must not pay much more for its workers than go + WaitGroup pays for goroutines, and a one-hash RunContext must stay cheap at the tail"
	reasonPorts  = "a library that ports its own fork-join helper onto one process-wide set must gain on small inputs and lose nothing on large ones or with concurrent callers, or it has no reason to port; a port that makes its body's scratch per chunk (marked *) is shown for that cost, not judged"
	// reasonPortsAllocs is ForChunks' reason to exist.
	reasonPortsAllocs = "a loop body with scratch of its own, made once per copy (ForChunks), must allocate no more per call than the goroutine helper it replaces"
)
