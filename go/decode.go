package flakery

/*
#include <stdlib.h>
#include "flakery.h"
*/
import "C"

import (
	"math"
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
	var mem cMem
	defer mem.free()
	spec := mem.add("layout", layout)
	var p C.flakery_parts
	if err := mem.call(func() C.flakery_status { return C.flakery_decode(spec, C.int64_t(id), &p) }); err != nil {
		return Parts{}, err
	}
	return partsFromC(&p), nil
}

// DecodeField is the raw value of one named field of id under layout: "time" (ticks since
// the epoch), "datacenter", "worker", "sequence", or a constant field such as Vesta's
// "version".
func DecodeField(layout string, id int64, field string) (uint64, error) {
	var mem cMem
	defer mem.free()
	spec, name := mem.add("layout", layout), mem.add("field", field)
	var out C.uint64_t
	err := mem.call(func() C.flakery_status { return C.flakery_decode_field(spec, C.int64_t(id), name, &out) })
	return uint64(out), err
}

// Compose is the inverse of Decode: the ID that Decode would take apart into p. The
// timestamp is rounded down to its tick; every other value must fit its field, else
// ErrInvalidArgument.
func Compose(layout string, p Parts) (int64, error) {
	var id C.int64_t
	err := withCParts(layout, p, func(spec *C.char, c *C.flakery_parts) C.flakery_status {
		return C.flakery_compose(spec, c, &id)
	})
	return int64(id), err
}

// DecodeU64 is Decode of an ID as an unsigned 64-bit integer: IDs of 2^63 and above decode
// under a layout that is unsigned by definition ("discord", ";unsigned=true") and are
// ErrInvalidArgument under any other.
func DecodeU64(layout string, id uint64) (Parts, error) {
	var mem cMem
	defer mem.free()
	spec := mem.add("layout", layout)
	var p C.flakery_parts
	if err := mem.call(func() C.flakery_status { return C.flakery_decode_u64(spec, C.uint64_t(id), &p) }); err != nil {
		return Parts{}, err
	}
	return partsFromC(&p), nil
}

// ComposeU64 is Compose giving an unsigned 64-bit integer: under an unsigned layout
// ("discord") the time field may use its top bit, which makes IDs of 2^63 and above.
func ComposeU64(layout string, p Parts) (uint64, error) {
	var id C.uint64_t
	err := withCParts(layout, p, func(spec *C.char, c *C.flakery_parts) C.flakery_status {
		return C.flakery_compose_u64(spec, c, &id)
	})
	return uint64(id), err
}

// withCParts calls f with layout and p as C values, freed when it returns.
func withCParts(layout string, p Parts, f func(spec *C.char, c *C.flakery_parts) C.flakery_status) error {
	if len(p.Fields) > 1<<16 {
		return invalidArgument("too many constant fields")
	}
	var mem cMem
	defer mem.free()
	spec := mem.add("layout", layout)
	c := C.flakery_parts{
		timestamp_ms:  C.int64_t(p.TimestampMs),
		datacenter_id: C.uint64_t(p.DatacenterID),
		worker_id:     C.uint64_t(p.WorkerID),
		sequence:      C.uint64_t(p.Sequence),
	}
	c.field_names, c.field_values, c.field_count = mem.fields("Fields", p.Fields)
	return mem.call(func() C.flakery_status { return f(spec, &c) })
}

// LayoutTimeLeft is how long layout can still make IDs from now (0 once it has run out).
func LayoutTimeLeft(layout string) (time.Duration, error) {
	var mem cMem
	defer mem.free()
	spec := mem.add("layout", layout)
	var ms C.int64_t
	err := mem.call(func() C.flakery_status { return C.flakery_layout_time_left_ms(spec, &ms) })
	if int64(ms) > int64(math.MaxInt64/time.Millisecond) {
		return time.Duration(math.MaxInt64), err
	}
	return time.Duration(ms) * time.Millisecond, err
}

// NormalizeLayout is the canonical spec of layout: a preset's name where it is one, else
// the full field list.
func NormalizeLayout(layout string) (string, error) {
	var mem cMem
	defer mem.free()
	spec := mem.add("layout", layout)
	if mem.err != nil {
		return "", mem.err
	}
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
