package flakery

/*
#include <stdlib.h>
#include "flakery.h"
*/
import "C"

import "unsafe"

// ToBase32 is the base32 form of id: 13 characters of Crockford's alphabet, upper case,
// zero-padded, so that sorting the strings sorts the IDs. A negative id has none.
func ToBase32(id int64) (string, error) {
	return encodeText(C.FLAKERY_BASE32_LEN, func(buf *C.char, n C.size_t, written *C.size_t) C.flakery_status {
		return C.flakery_to_base32(C.int64_t(id), buf, n, written)
	})
}

// ToBase62 is the base62 form of id: 11 characters of 0-9A-Za-z, zero-padded, so that
// sorting the strings byte by byte sorts the IDs. A negative id has none.
func ToBase62(id int64) (string, error) {
	return encodeText(C.FLAKERY_BASE62_LEN, func(buf *C.char, n C.size_t, written *C.size_t) C.flakery_status {
		return C.flakery_to_base62(C.int64_t(id), buf, n, written)
	})
}

// FromBase32 reads a base32 form, case-insensitively and with Crockford's aliases (O as 0,
// I and L as 1). A wrong length, a character outside the alphabet or a value above 2^63-1
// is an error with code invalid_argument that names the character or the reason.
func FromBase32(text string) (int64, error) {
	return decodeText(text, func(s *C.char, out *C.int64_t) C.flakery_status {
		return C.flakery_from_base32(s, out)
	})
}

// FromBase62 reads a base62 form, as FromBase32 does.
func FromBase62(text string) (int64, error) {
	return decodeText(text, func(s *C.char, out *C.int64_t) C.flakery_status {
		return C.flakery_from_base62(s, out)
	})
}

func encodeText(length C.size_t, f func(buf *C.char, n C.size_t, written *C.size_t) C.flakery_status) (string, error) {
	var buf [C.FLAKERY_BASE32_LEN + 1]C.char
	var written C.size_t
	if err := call(func() C.flakery_status { return f(&buf[0], length+1, &written) }); err != nil {
		return "", err
	}
	return C.GoStringN(&buf[0], C.int(written)), nil
}

func decodeText(text string, f func(s *C.char, out *C.int64_t) C.flakery_status) (int64, error) {
	for i := 0; i < len(text); i++ {
		if text[i] == 0 {
			return 0, invalidArgument("an ID's text form cannot contain a NUL byte")
		}
	}
	s := C.CString(text)
	defer C.free(unsafe.Pointer(s))
	var out C.int64_t
	err := call(func() C.flakery_status { return f(s, &out) })
	return int64(out), err
}
