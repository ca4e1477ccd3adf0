// Package gtest is workgang's cross-package sanity suite, the counterpart of
// HotSpot's WorkerThreads gtest. It has no library code: its tests drive
// package workers end to end (with tasks, gang and semaphore underneath) and
// check the dispatch guarantees from the outside.
package gtest
