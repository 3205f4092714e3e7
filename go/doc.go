// Package flakery makes Snowflake-style 64-bit unique IDs: time, node and sequence bits in one
// int64 that sorts by time, never repeats, and needs no coordination between processes once
// each has its node ID.
//
// It is a thin cgo wrapper over the C library of flakery (libflakery, include/flakery.h),
// found with pkg-config. By default it links the static library (pkg-config package
// flakery-static), so a built program needs nothing beside it; build with -tags
// flakery_shared to link libflakery.so instead (pkg-config package flakery). Point
// PKG_CONFIG_PATH at the lib/pkgconfig folder of the C release tarball or of an installed
// prefix.
//
// The quickest start is the process-wide generator:
//
//	id, err := flakery.NextID()
//
// which takes its node identity from the environment (FLAKERY_WORKER_ID, FLAKERY_ZOOKEEPER,
// FLAKERY_LEASE_DIR, ...). A Generator of your own, made by New, takes explicit options.
//
// Every error returned by this package is an *Error carrying one of the stable codes shared
// by every flakery binding, such as "invalid_layout"; test for a kind of failure with
// errors.Is(err, flakery.ErrInvalidLayout) and friends.
package flakery
