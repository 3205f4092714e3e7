package flakery

/*
#define _DEFAULT_SOURCE
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include "flakery.h"

// A copy may hold a secret (a token, a database URL's password), which must not stay
// readable in freed C memory: each block is wiped before it is freed. explicit_bzero is never
// optimised away.
static void flakery_go_wipe(void *p, size_t n) {
	explicit_bzero(p, n);
}
*/
import "C"

import (
	"fmt"
	"strings"
	"unsafe"
)

// cMem holds the C copies of one call's arguments (strings, arrays, structs), which C only
// borrows during the call. free wipes and releases them. Its methods take a pointer, so that
// `defer mem.free()` frees what add appends after the defer statement (with a value receiver
// the defer would bind the empty slice of that moment and free nothing).
type cMem struct {
	blocks []cBlock
	// err is the first argument C could not be given (a string with a NUL byte); call
	// returns it instead of calling C.
	err error
}

type cBlock struct {
	p unsafe.Pointer
	n C.size_t
}

// alloc is n bytes of zeroed C memory, released by free.
func (m *cMem) alloc(n uintptr) unsafe.Pointer {
	p := C.calloc(1, C.size_t(n))
	if p == nil {
		panic("flakery: out of C memory")
	}
	m.blocks = append(m.blocks, cBlock{p, C.size_t(n)})
	return p
}

// add is text as a NUL-terminated C string, released by free. A NUL byte inside text would
// cut the C string short there (a layout, a token, a URL read as less than was given), so it
// makes call refuse with invalid_argument naming the argument as Go spells it (name), never
// showing the text (it may be a secret).
func (m *cMem) add(name, text string) *C.char {
	m.refuseNul(name, text)
	p := C.CString(text)
	m.blocks = append(m.blocks, cBlock{unsafe.Pointer(p), C.size_t(len(text) + 1)})
	return p
}

// fields copies names and values into C memory (cgo forbids handing C an array of Go
// pointers) and returns them with their count.
func (m *cMem) fields(name string, values map[string]uint64) (**C.char, *C.uint64_t, C.size_t) {
	n := len(values)
	if n == 0 {
		return nil, nil, 0
	}
	names := unsafe.Slice((**C.char)(m.alloc(uintptr(n)*unsafe.Sizeof((*C.char)(nil)))), n)
	nums := unsafe.Slice((*C.uint64_t)(m.alloc(uintptr(n)*unsafe.Sizeof(C.uint64_t(0)))), n)
	i := 0
	for field, value := range values {
		names[i] = m.add(fmt.Sprintf("a name in %s", name), field)
		nums[i] = C.uint64_t(value)
		i++
	}
	return &names[0], &nums[0], C.size_t(n)
}

// refuseNul makes call refuse if text holds a NUL byte (see add).
func (m *cMem) refuseNul(name, text string) {
	if at := strings.IndexByte(text, 0); at >= 0 && m.err == nil {
		m.err = invalidArgument(fmt.Sprintf("%s contains a NUL byte (at byte %d), which a C string cannot hold", name, at))
	}
}

// call runs f unless an argument could not be copied for C (then that error).
func (m *cMem) call(f func() C.flakery_status) error {
	if m.err != nil {
		return m.err
	}
	return call(f)
}

// free wipes and releases every block; the cMem can be used again afterwards.
func (m *cMem) free() {
	m.wipe()
	for _, b := range m.blocks {
		C.free(b.p)
	}
	m.blocks = nil
	m.err = nil
}

// wipe sets every byte of every block to 0.
func (m *cMem) wipe() {
	for _, b := range m.blocks {
		C.flakery_go_wipe(b.p, b.n)
	}
}

// block is a copy of the bytes of block i, for tests.
func (m *cMem) block(i int) []byte {
	return C.GoBytes(m.blocks[i].p, C.int(m.blocks[i].n))
}
