package flakery

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// wantNulRefused checks that err refuses a string with a NUL byte at byte at, naming the
// argument as Go spells it, and never shows the text.
func wantNulRefused(t *testing.T, what string, err error, name string, at int) {
	t.Helper()
	want := fmt.Sprintf("%s contains a NUL byte (at byte %d), which a C string cannot hold", name, at)
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeInvalidArgument || e.Message != want {
		t.Errorf("%s: got %v, want invalid_argument: %s", what, err, want)
		return
	}
	if strings.Contains(e.Message, "secret") {
		t.Errorf("%s: the message shows the text: %s", what, e.Message)
	}
}

// Every string field (a *string) of Options (found by reflection, so a field added later is covered) is
// refused with a NUL byte inside, before C could read it cut short at the NUL: C would take
// "twitter\x00..." as "twitter".
func TestOptionsStringsWithNulAreRefused(t *testing.T) {
	typ := reflect.TypeOf(Options{})
	strs := 0
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i)
		if f.Type != reflect.TypeOf((*string)(nil)) {
			continue
		}
		strs++
		o := Options{DatacenterID: Uint64(1), WorkerID: Uint64(1)}
		reflect.ValueOf(&o).Elem().Field(i).Set(reflect.ValueOf(String("twitter\x00secret")))
		g, err := New(o)
		if err == nil {
			g.Close()
		}
		wantNulRefused(t, "New with "+f.Name, err, f.Name, 7)
		// The same Options as a client's fallback.
		co := DefaultClientOptions()
		co.Servers = []string{"http://127.0.0.1:1"}
		co.Fallback = &o
		c, err := NewClient(co)
		if err == nil {
			c.Close()
		}
		wantNulRefused(t, "NewClient with Fallback."+f.Name, err, f.Name, 7)
	}
	if strs != 6 {
		t.Errorf("Options has %d string fields, this test expects 6", strs)
	}
	_, err := New(Options{DatacenterID: Uint64(1), WorkerID: Uint64(1), Fields: map[string]uint64{"ver\x00secret": 1}})
	wantNulRefused(t, "New with a field name", err, "a name in Fields", 3)
}

func TestClientStringsWithNulAreRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(*ClientOptions)
		at   int
	}{
		{"Servers[1]", func(o *ClientOptions) { o.Servers = []string{"http://127.0.0.1:1", "http://127.0.0.1:2\x00secret"} }, 18},
		{"Token", func(o *ClientOptions) { o.Token = String("tok\x00secret") }, 3},
		{"Layout", func(o *ClientOptions) { o.Layout = String("twitter\x00secret") }, 7},
	} {
		o := DefaultClientOptions()
		o.Servers = []string{"http://127.0.0.1:1"}
		tc.set(&o)
		c, err := NewClient(o)
		if err == nil {
			c.Close()
		}
		wantNulRefused(t, "NewClient with "+tc.name, err, tc.name, tc.at)
	}
}

// Every function that takes a layout or a field name as text.
func TestLayoutAndFieldStringsWithNulAreRefused(t *testing.T) {
	const layout = "twitter\x00secret"
	_, err := Decode(layout, 1)
	wantNulRefused(t, "Decode", err, "layout", 7)
	_, err = DecodeU64(layout, 1)
	wantNulRefused(t, "DecodeU64", err, "layout", 7)
	_, err = DecodeField(layout, 1, "worker")
	wantNulRefused(t, "DecodeField's layout", err, "layout", 7)
	_, err = DecodeField("twitter", 1, "worker\x00secret")
	wantNulRefused(t, "DecodeField's field", err, "field", 6)
	_, err = Compose(layout, Parts{})
	wantNulRefused(t, "Compose", err, "layout", 7)
	_, err = ComposeU64(layout, Parts{})
	wantNulRefused(t, "ComposeU64", err, "layout", 7)
	_, err = Compose("vesta", Parts{Fields: map[string]uint64{"ver\x00secret": 1}})
	wantNulRefused(t, "Compose's field name", err, "a name in Fields", 3)
	_, err = LayoutTimeLeft(layout)
	wantNulRefused(t, "LayoutTimeLeft", err, "layout", 7)
	_, err = NormalizeLayout(layout)
	wantNulRefused(t, "NormalizeLayout", err, "layout", 7)
}
