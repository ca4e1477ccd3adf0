// Package gtest is workgang's cross-package sanity suite, the counterpart of
// HotSpot's WorkerThreads gtest. It has no library code: its tests drive
// package workers end to end (with tasks and the dispatcher, package gang,
// underneath) and check the dispatch guarantees from the outside.
package gtest
