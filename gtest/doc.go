// Package gtest is workgang's cross-package sanity suite, the counterpart of
// HotSpot's WorkerThreads gtest. It has no library code: its tests drive
// package workers end to end (with tasks, the dispatcher of package gang
// and the semaphores it parks on underneath) and check the dispatch
// guarantees from the outside.
package gtest
