package flakery

/*
#include <stdlib.h>
#include "flakery.h"
*/
import "C"

import (
	"time"
	"unsafe"
)

// Parts is an ID taken apart by Decode, or what Compose builds one from.
type Parts struct {
	// TimestampMs is the start of the ID's tick in Unix milliseconds.
	TimestampMs int64
	// DatacenterID and WorkerID are 0 when the layout has no such field.
	DatacenterID uint64
	WorkerID     uint64
	Sequence     uint64
	// Fields are values of constant fields by name, for Compose only (a constant not named
	// takes its layout default). Decode leaves it nil: read constants with DecodeField.
	Fields map[string]uint64
}

// Time is TimestampMs as a time.Time.
func (p Parts) Time() time.Time { return time.UnixMilli(p.TimestampMs) }

func partsFromC(p *C.flakery_parts) Parts {
	return Parts{
		TimestampMs:  int64(p.timestamp_ms),
		DatacenterID: uint64(p.datacenter_id),
		WorkerID:     uint64(p.worker_id),
		Sequence:     uint64(p.sequence),
	}
}

// Decode takes id apart under layout (a spec such as "twitter" or "discord"). A negative id,
// or one with bits set above the layout's, is ErrInvalidArgument.
func Decode(layout string, id int64) (Parts, error) {
	var strs cStrings
	defer strs.free()
	spec := strs.add(layout)
	var p C.flakery_parts
	if err := call(func() C.flakery_status { return C.flakery_decode(spec, C.int64_t(id), &p) }); err != nil {
		return Parts{}, err
	}
	return partsFromC(&p), nil
}

// DecodeField is the raw value of one named field of id under layout: "time" (ticks since
// the epoch), "datacenter", "worker", "sequence", or a constant field such as Vesta's
// "version".
func DecodeField(layout string, id int64, field string) (uint64, error) {
	var strs cStrings
	defer strs.free()
	spec, name := strs.add(layout), strs.add(field)
	var out C.uint64_t
	err := call(func() C.flakery_status { return C.flakery_decode_field(spec, C.int64_t(id), name, &out) })
	return uint64(out), err
}

// Compose is the inverse of Decode: the ID that Decode would take apart into p. The
// timestamp is rounded down to its tick; every other value must fit its field, else
// ErrInvalidArgument.
func Compose(layout string, p Parts) (int64, error) {
	if len(p.Fields) > 1<<16 {
		return 0, invalidArgument("too many constant fields")
	}
	var strs cStrings
	defer strs.free()
	spec := strs.add(layout)
	c := C.flakery_parts{
		timestamp_ms:  C.int64_t(p.TimestampMs),
		datacenter_id: C.uint64_t(p.DatacenterID),
		worker_id:     C.uint64_t(p.WorkerID),
		sequence:      C.uint64_t(p.Sequence),
	}
	c.field_names, c.field_values, c.field_count = strs.fields(p.Fields)
	var id C.int64_t
	err := call(func() C.flakery_status { return C.flakery_compose(spec, &c, &id) })
	return int64(id), err
}

// NormalizeLayout is the canonical spec of layout: a preset's name where it is one, else
// the full field list.
func NormalizeLayout(layout string) (string, error) {
	var strs cStrings
	defer strs.free()
	spec := strs.add(layout)
	return readString(func(buf *C.char, n C.size_t, written *C.size_t) C.flakery_status {
		return C.flakery_layout_normalize(spec, buf, n, written)
	})
}

// readString runs a C function that writes a NUL-terminated string into a buffer: first for
// the length, then into a buffer of that size.
func readString(f func(buf *C.char, n C.size_t, written *C.size_t) C.flakery_status) (string, error) {
	var length C.size_t
	if err := call(func() C.flakery_status { return f(nil, 0, &length) }); err != nil {
		return "", err
	}
	buf := (*C.char)(C.malloc(length + 1))
	defer C.free(unsafe.Pointer(buf))
	var written C.size_t
	if err := call(func() C.flakery_status { return f(buf, length+1, &written) }); err != nil {
		return "", err
	}
	return C.GoStringN(buf, C.int(written)), nil
}
