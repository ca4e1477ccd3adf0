//go:build !purego

#include "textflag.h"

// func getg() uintptr
// In ABI0 assembly the current g lives in thread-local storage; (TLS) is the
// assembler's pseudo-register for that slot.
TEXT ·getg(SB), NOSPLIT, $0-8
	MOVQ (TLS), AX
	MOVQ AX, ret+0(FP)
	RET
