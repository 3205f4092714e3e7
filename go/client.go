package flakery

/*
#include <stdlib.h>
#include "flakery.h"
*/
import "C"

import (
	"fmt"
	"runtime"
	"strings"
	"time"
)

// ClientOptions configure NewClient. Start from DefaultClientOptions(), which holds the
// defaults of the options table (docs/client.md#options), and set what you need: a zero
// duration or block size is refused, as every surface refuses it, never read as "the default".
// Nil Servers, Token and Layout are "not given": FLAKERY_SERVERS, FLAKERY_SERVER_TOKEN and
// FLAKERY_LAYOUT (else "twitter"); String("") is given, and judged as on every surface.
type ClientOptions struct {
	// Servers are base URLs, "http://host:port" or "https://host:port"; each may hold several
	// separated by commas.
	Servers []string
	// Token is the bearer token; it never appears in an error.
	Token *string
	// Layout is the servers' layout, for Decode (checked against each server).
	Layout *string
	// MaxAge: an ID held longer than this is dropped, never handed out (at least 1 ms).
	MaxAge time.Duration
	// Timeout: every call returns or fails within this (at least 1 ms); a batch
	// within this plus the time its count takes at the layout's rate.
	Timeout time.Duration
	// RequestTimeout: one request may take this long before the next server is asked
	// (at least 1 ms; at most Timeout is used).
	RequestTimeout time.Duration
	// MinBlock is the smallest block of IDs asked for (1 to MaxBlock).
	MinBlock int
	// MaxBlock is the largest block of IDs asked for (MinBlock to 100000).
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
	// ServerCA is a PEM file of the CAs an https:// server's certificate must be signed by
	// (nil: FLAKERY_SERVER_CA, else the system's roots).
	ServerCA *string
	// ClientCert is a PEM certificate (with its chain) for servers that ask for one (mutual
	// TLS; nil: FLAKERY_CLIENT_CERT, else none).
	ClientCert *string
	// ClientKey is the PEM file of its private key (nil: FLAKERY_CLIENT_KEY); only its path
	// is ever shown in an error.
	ClientKey *string
	// SendTokenInClear sends the token over http:// to a host that is not loopback; without
	// it such a client is refused (ErrInvalidArgument).
	SendTokenInClear bool
}

// DefaultClientOptions are the client's options with every default of the options table,
// as the C library's flakery_client_options_init writes them (10 s, 5 s, 1 s, 16, 10000):
// the table is read, never copied here.
func DefaultClientOptions() ClientOptions {
	var opts C.flakery_client_options
	if err := call(func() C.flakery_status { return C.flakery_client_options_init(&opts) }); err != nil {
		panic("flakery: flakery_client_options_init failed: " + err.Error())
	}
	return ClientOptions{
		MaxAge:         time.Duration(opts.max_age_ms) * time.Millisecond,
		Timeout:        time.Duration(opts.timeout_ms) * time.Millisecond,
		RequestTimeout: time.Duration(opts.request_timeout_ms) * time.Millisecond,
		MinBlock:       int(opts.min_block),
		MaxBlock:       int(opts.max_block),
		NoPrefetch:     bool(opts.no_prefetch),
		PreferFirst:    bool(opts.prefer_first),
	}
}

// Client takes IDs from flakery serve instances, with the calls of a Generator: NextID is a
// local call in the steady state (docs/client.md). It is safe for concurrent use.
type Client struct {
	ptr *C.flakery_client
}

// millis is d in whole milliseconds for C. Below 1 ms (0 among them) it is refused here, where
// it is still a Duration, in the words of the core's check of a Rust Duration
// (option_table::ClientOptionSpec::duration_ms) with Go's name and Go's way to show it; a
// value C would refuse in its own words (0) never gets there.
func millis(name string, d time.Duration) (C.uint64_t, error) {
	if d < time.Millisecond {
		return 0, invalidArgument(name + " must be from 1 ms to 2^64-1 ms, not " + d.String())
	}
	return C.uint64_t(d.Milliseconds()), nil
}

// NewClient makes a client from o, which starts from DefaultClientOptions(). It asks no
// server yet. Close it when done; the memory is released when the client is garbage
// collected.
func NewClient(o ClientOptions) (*Client, error) {
	if o.MinBlock < 0 || o.MaxBlock < 0 {
		return nil, invalidArgument("MinBlock and MaxBlock must not be negative")
	}
	var opts C.flakery_client_options
	if err := call(func() C.flakery_status { return C.flakery_client_options_init(&opts) }); err != nil {
		return nil, err
	}
	var err error
	for _, d := range []struct {
		name  string
		value time.Duration
		out   *C.uint64_t
	}{
		{"MaxAge", o.MaxAge, &opts.max_age_ms},
		{"Timeout", o.Timeout, &opts.timeout_ms},
		{"RequestTimeout", o.RequestTimeout, &opts.request_timeout_ms},
	} {
		if *d.out, err = millis(d.name, d.value); err != nil {
			return nil, err
		}
	}
	opts.min_block = C.size_t(o.MinBlock)
	opts.max_block = C.size_t(o.MaxBlock)
	opts.no_prefetch = C.bool(o.NoPrefetch)
	opts.prefer_first = C.bool(o.PreferFirst)
	opts.send_token_in_clear = C.bool(o.SendTokenInClear)

	// The token and the servers (which may carry one in a URL) are wiped from C memory by
	// free, as every string of mem is.
	var mem cMem
	defer mem.free()
	for i, server := range o.Servers {
		// Named one by one: C is given them joined, where a position would mislead.
		mem.refuseNul(fmt.Sprintf("Servers[%d]", i), server)
	}
	if len(o.Servers) > 0 {
		opts.servers = mem.add("Servers", strings.Join(o.Servers, ","))
	}
	if o.Token != nil {
		opts.token = mem.add("Token", *o.Token)
	}
	if o.Layout != nil {
		opts.layout = mem.add("Layout", *o.Layout)
	}
	for _, f := range []struct {
		name  string
		value *string
		out   **C.char
	}{
		{"ServerCA", o.ServerCA, &opts.server_ca},
		{"ClientCert", o.ClientCert, &opts.client_cert},
		{"ClientKey", o.ClientKey, &opts.client_key},
	} {
		if f.value != nil {
			*f.out = mem.add(f.name, *f.value)
		}
	}
	if o.Fallback != nil {
		// In C memory: cgo forbids handing C a Go pointer to memory that holds Go pointers.
		fallback := (*C.flakery_options)(mem.alloc(C.sizeof_flakery_options))
		if err := o.Fallback.fill(fallback, &mem); err != nil {
			return nil, err
		}
		opts.fallback = fallback
	}

	var ptr *C.flakery_client
	if err := mem.call(func() C.flakery_status { return C.flakery_client_new(&opts, &ptr) }); err != nil {
		return nil, err
	}
	c := &Client{ptr: ptr}
	// Freeing never waits for a server: the client's thread ends by itself.
	runtime.SetFinalizer(c, func(c *Client) {
		C.flakery_client_free(c.ptr)
		handlesFreed.Add(1)
	})
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
