package steal

// DrainAbortEvery exports drainAbortEvery to the external tests: the bound on
// the values a worker processes in Drain once it can see an abort.
const DrainAbortEvery = drainAbortEvery
