// Package term tells whether a file is a terminal, so that the module's
// commands rewrite progress lines only there and a redirected log gets no
// escape codes. It imports the standard library and golang.org/x/sys.
package term
