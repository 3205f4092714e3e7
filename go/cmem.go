package flakery

/*
#define _DEFAULT_SOURCE
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

// A copy may hold a secret (a token, a database URL's password), which must not stay
// readable in freed C memory: each block is wiped before it is freed. explicit_bzero is never
// optimised away.
static void flakery_go_wipe(void *p, size_t n) {
	explicit_bzero(p, n);
}
*/
import "C"

import "unsafe"

// cMem holds the C copies of one call's arguments (strings, arrays, structs), which C only
// borrows during the call. free wipes and releases them. Its methods take a pointer, so that
// `defer mem.free()` frees what add appends after the defer statement (with a value receiver
// the defer would bind the empty slice of that moment and free nothing).
type cMem struct {
	blocks []cBlock
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

// add is text as a NUL-terminated C string, released by free.
func (m *cMem) add(text string) *C.char {
	p := C.CString(text)
	m.blocks = append(m.blocks, cBlock{unsafe.Pointer(p), C.size_t(len(text) + 1)})
	return p
}

// fields copies names and values into C memory (cgo forbids handing C an array of Go
// pointers) and returns them with their count.
func (m *cMem) fields(values map[string]uint64) (**C.char, *C.uint64_t, C.size_t) {
	n := len(values)
	if n == 0 {
		return nil, nil, 0
	}
	names := unsafe.Slice((**C.char)(m.alloc(uintptr(n)*unsafe.Sizeof((*C.char)(nil)))), n)
	nums := unsafe.Slice((*C.uint64_t)(m.alloc(uintptr(n)*unsafe.Sizeof(C.uint64_t(0)))), n)
	i := 0
	for name, value := range values {
		names[i] = m.add(name)
		nums[i] = C.uint64_t(value)
		i++
	}
	return &names[0], &nums[0], C.size_t(n)
}

// free wipes and releases every block; the cMem can be used again afterwards.
func (m *cMem) free() {
	m.wipe()
	for _, b := range m.blocks {
		C.free(b.p)
	}
	m.blocks = nil
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
