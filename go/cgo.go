package flakery

/*
#cgo !flakery_shared pkg-config: flakery-static
#cgo flakery_shared pkg-config: flakery
#include <stdlib.h>
#include "flakery.h"
*/
import "C"

import "runtime"

// call runs one C call and turns its status into an error. The C library keeps the detailed
// message of a failure per OS thread, so the goroutine stays on one thread from the call
// until the message is read.
func call(f func() C.flakery_status) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	status := f()
	if status == C.FLAKERY_STATUS_OK {
		return nil
	}
	return &Error{
		Code:    Code(C.GoString(C.flakery_status_message(C.int32_t(status)))),
		Message: C.GoString(C.flakery_last_error()),
	}
}

// Version is the version of the linked C library, such as "0.1.0".
func Version() string { return C.GoString(C.flakery_version()) }
