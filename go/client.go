package flakery

/*
#include <stdlib.h>
#include "flakery.h"
*/
import "C"

import (
	"runtime"
	"strings"
	"time"
	"unsafe"
)

// ClientOptions configure NewClient. The zero value is every default: the servers from
// FLAKERY_SERVERS, the token from FLAKERY_SERVER_TOKEN, the layout from FLAKERY_LAYOUT (else
// "twitter"), and the defaults of docs/client.md#options for a zero duration or size.
type ClientOptions struct {
	// Servers are base URLs, "http://host:port"; each may hold several separated by commas.
	Servers []string
	// Token is the bearer token; it never appears in an error.
	Token string
	// Layout is the servers' layout, for Decode (checked against each server).
	Layout string
	// MaxAge: an ID held longer than this is dropped, never handed out (default 10 s).
	MaxAge time.Duration
	// Timeout: every call returns or fails within this (default 5 s).
	Timeout time.Duration
	// RequestTimeout: one request may take this long before the next server is asked
	// (default 1 s).
	RequestTimeout time.Duration
	// MinBlock is the smallest block of IDs asked for (default 16).
	MinBlock int
	// MaxBlock is the largest block of IDs asked for (default 10000, at most 100000).
	MaxBlock int
	// NoPrefetch asks for a block only when the stock is empty.
	NoPrefetch bool
	// PreferFirst asks the servers in the order given, the first first.
	PreferFirst bool
	// Fallback, if set, are the options of a generator that NewClient makes and the client
	// uses when every server is unavailable (ErrServersUnavailable). Give it a node ID no
	// server ever holds (a datacenter ID of its own, or a worker ID kept for fallbacks): only
	// then are its IDs unique against the servers'.
	Fallback *Options
}

// Client takes IDs from flakery serve instances, with the calls of a Generator: NextID is a
// local call in the steady state (docs/client.md). It is safe for concurrent use.
type Client struct {
	ptr *C.flakery_client
}

func millis(d time.Duration) C.uint64_t {
	if d <= 0 {
		return 0
	}
	if ms := d.Milliseconds(); ms > 0 {
		return C.uint64_t(ms)
	}
	return 1
}

// NewClient makes a client. It asks no server yet. Close it when done; the memory is
// released when the client is garbage collected.
func NewClient(o ClientOptions) (*Client, error) {
	if o.MinBlock < 0 || o.MaxBlock < 0 {
		return nil, invalidArgument("MinBlock and MaxBlock must not be negative")
	}
	var opts C.flakery_client_options
	if err := call(func() C.flakery_status { return C.flakery_client_options_init(&opts) }); err != nil {
		return nil, err
	}
	var strs cStrings
	defer strs.free()
	if len(o.Servers) > 0 {
		opts.servers = strs.add(strings.Join(o.Servers, ","))
	}
	if o.Token != "" {
		opts.token = strs.add(o.Token)
	}
	if o.Layout != "" {
		opts.layout = strs.add(o.Layout)
	}
	opts.max_age_ms = millis(o.MaxAge)
	opts.timeout_ms = millis(o.Timeout)
	opts.request_timeout_ms = millis(o.RequestTimeout)
	opts.min_block = C.size_t(o.MinBlock)
	opts.max_block = C.size_t(o.MaxBlock)
	opts.no_prefetch = C.bool(o.NoPrefetch)
	opts.prefer_first = C.bool(o.PreferFirst)
	if o.Fallback != nil {
		// In C memory: cgo forbids handing C a Go pointer to memory that holds Go pointers.
		fallback := (*C.flakery_options)(C.malloc(C.sizeof_flakery_options))
		strs = append(strs, unsafe.Pointer(fallback))
		if err := o.Fallback.fill(fallback, &strs); err != nil {
			return nil, err
		}
		opts.fallback = fallback
	}

	var ptr *C.flakery_client
	if err := call(func() C.flakery_status { return C.flakery_client_new(&opts, &ptr) }); err != nil {
		return nil, err
	}
	c := &Client{ptr: ptr}
	// Freeing never waits for a server: the client's thread ends by itself.
	runtime.SetFinalizer(c, func(c *Client) { C.flakery_client_free(c.ptr) })
	return c, nil
}

// Close stops the client: the IDs it holds are dropped, never given back; every later call
// fails with ErrInvalidArgument. Closing twice is fine.
func (c *Client) Close() error {
	err := call(func() C.flakery_status { return C.flakery_client_close(c.ptr) })
	runtime.KeepAlive(c)
	return err
}

// NextID returns a new ID: from the client's stock in the steady state; it waits for a
// block at most the client's Timeout. IDs increase within a block; across servers they may
// interleave.
func (c *Client) NextID() (int64, error) {
	var id C.int64_t
	err := call(func() C.flakery_status { return C.flakery_client_next_id(c.ptr, &id) })
	runtime.KeepAlive(c)
	return int64(id), err
}

// NextIDs returns n new IDs.
func (c *Client) NextIDs(n int) ([]int64, error) {
	ids, err := nextIDs(n, func(out *C.int64_t, n C.size_t) C.flakery_status {
		return C.flakery_client_next_ids(c.ptr, out, n)
	})
	runtime.KeepAlive(c)
	return ids, err
}

// Layout is the servers' layout as its canonical spec.
func (c *Client) Layout() string {
	text, _ := readString(func(buf *C.char, n C.size_t, written *C.size_t) C.flakery_status {
		return C.flakery_client_layout(c.ptr, buf, n, written)
	})
	runtime.KeepAlive(c)
	return text
}

// Decode takes id apart under the servers' layout.
func (c *Client) Decode(id int64) (Parts, error) {
	var p C.flakery_parts
	err := call(func() C.flakery_status { return C.flakery_client_decode(c.ptr, C.int64_t(id), &p) })
	runtime.KeepAlive(c)
	if err != nil {
		return Parts{}, err
	}
	return partsFromC(&p), nil
}
