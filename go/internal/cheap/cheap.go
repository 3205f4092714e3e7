// Package cheap reads how many bytes of the C heap are in use, for the memory tests of
// package flakery: the allocator's own count, which sees a leak of a few bytes a call where
// the process's resident pages would hide it among the Go heap's. Only tests import it.
package cheap

/*
#include <stddef.h>

// Both weak, so that the package builds and links where either is missing (musl has no
// mallinfo2; only a program built with -asan has the sanitizer's allocator).
struct cheap_mallinfo2 {
	size_t arena, ordblks, smblks, hblks, hblkhd, usmblks, fsmblks, uordblks, fordblks, keepcost;
};
extern struct cheap_mallinfo2 mallinfo2(void) __attribute__((weak));
extern size_t __sanitizer_get_current_allocated_bytes(void) __attribute__((weak));

static long long cheap_in_use(void) {
	if (__sanitizer_get_current_allocated_bytes) {
		return (long long)__sanitizer_get_current_allocated_bytes();
	}
	if (mallinfo2) {
		struct cheap_mallinfo2 m = mallinfo2();
		// Chunks in the arenas plus the ones mmap'ed on their own.
		return (long long)(m.uordblks + m.hblkhd);
	}
	return -1;
}
*/
import "C"

// InUse is the bytes of the C heap in use, and false where the C library gives no count
// (not glibc, no sanitizer).
func InUse() (int64, bool) {
	n := int64(C.cheap_in_use())
	return n, n >= 0
}
