//go:build !race

package gtest

const raceEnabled = false
