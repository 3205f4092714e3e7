package flakery

import (
	"errors"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// generatorTable is docs/spec.md#generator-options (rendered from the core's table,
// core/src/option_table/generator.rs): Go name, values, default of each row.
func generatorTable(t *testing.T) [][3]string {
	var rows [][3]string
	for _, cells := range docsTable(t, "spec.md", "### Generator options") {
		rows = append(rows, [3]string{strings.Trim(cells[3], "`"), cells[7], cells[8]})
	}
	return rows
}

var leastValue = regexp.MustCompile(`^(0|1) to `)

// Every millisecond option is a pointer (nil: not given, so that 0 is the caller's 0); a 0
// that the table's values allow is taken, one they do not is refused with every surface's
// message (the C library's, which Go shows with the C member's name), never read as the default.
func TestGeneratorOptionsAreTheTables(t *testing.T) {
	typ := reflect.TypeOf(Options{})
	millis := 0
	for _, row := range generatorTable(t) {
		goName, values := row[0], row[1]
		field, ok := typ.FieldByName(goName)
		if !ok {
			t.Fatalf("the table's Go name %s is no field of Options", goName)
		}
		if !strings.HasSuffix(goName, "Ms") {
			continue
		}
		millis++
		if field.Type != reflect.TypeOf((*uint64)(nil)) {
			t.Errorf("Options.%s is %v, not *uint64: its 0 could not be told from not given", goName, field.Type)
			continue
		}
		least := leastValue.FindStringSubmatch(values)
		if least == nil {
			t.Errorf("%s: the table's values %q do not start with 0 or 1", goName, values)
			continue
		}
		build := func(v *uint64) error {
			o := Options{DatacenterID: Uint64(1), WorkerID: Uint64(1)}
			reflect.ValueOf(&o).Elem().FieldByName(goName).Set(reflect.ValueOf(v))
			g, err := New(o)
			if err == nil {
				g.Close()
			}
			return err
		}
		if err := build(nil); err != nil {
			t.Errorf("%s not given: %v", goName, err)
		}
		if err := build(Uint64(1)); err != nil {
			t.Errorf("%s = 1: %v", goName, err)
		}
		err := build(Uint64(0))
		if least[1] == "0" {
			if err != nil {
				t.Errorf("%s = 0, which the table allows: %v", goName, err)
			}
			continue
		}
		// C spells the option in snake case: SessionTimeoutMs is session_timeout_ms.
		cName := strings.ToLower(regexp.MustCompile(`([a-z])([A-Z])`).ReplaceAllString(goName, "${1}_$2"))
		want := cName + " must be at least 1, not 0"
		var e *Error
		if !errors.As(err, &e) || e.Code != CodeInvalidArgument || e.Message != want {
			t.Errorf("%s = 0 gave %v, wanted invalid_argument: %s", goName, err, want)
		}
	}
	if millis != 3 {
		t.Errorf("%d millisecond rows in the table, this test knows 3", millis)
	}
}

// An empty string is given, never "not given": the core judges String("") as it judges
// Python's namespace="" or layout="" (refused, with the same code and message), and only a nil
// field falls back to the environment and the table's default. Every string option of Options
// and ClientOptions is a *string, so that "" can be told from not given.
func TestEmptyStringsAreGivenAsOnEverySurface(t *testing.T) {
	for _, typ := range []reflect.Type{reflect.TypeOf(Options{}), reflect.TypeOf(ClientOptions{})} {
		for i := 0; i < typ.NumField(); i++ {
			if f := typ.Field(i); f.Type.Kind() == reflect.String {
				t.Errorf("%s.%s is a string: its \"\" could not be told from not given", typ.Name(), f.Name)
			}
		}
	}
	// The layout's preset list is the core's: only the start of its message is fixed here.
	layoutEmpty := "layout '' is empty: give a preset name ("
	cases := []struct {
		name    string
		options Options
		code    Code
		message string
		prefix  bool
	}{
		{"Namespace", Options{Namespace: String("")}, CodeInvalidArgument,
			"namespace '' must be 1 to 64 letters, digits, '-', '_' or '.'", false},
		{"Layout", Options{Layout: String("")}, CodeInvalidLayout, layoutEmpty, true},
		{"DatabaseURL", Options{DatabaseURL: String("")}, CodeInvalidArgument,
			"the database URL must start with postgres://, postgresql:// or mysql://", false},
		{"DatabaseMode", Options{DatabaseMode: String("")}, CodeInvalidArgument,
			"database mode '' is not 'lease' (flakery's table, the default) or 'baidu' (uid-generator's WORKER_NODE table)", false},
	}
	check := func(name string, err error, code Code, message string, prefix bool) {
		var e *Error
		if !errors.As(err, &e) || e.Code != code ||
			(prefix && !strings.HasPrefix(e.Message, message)) || (!prefix && e.Message != message) {
			t.Errorf("%s = String(\"\") gave %v, wanted %s: %s", name, err, code, message)
		}
	}
	for _, c := range cases {
		// Leased (no fixed node IDs), so that the namespace is read too.
		g, err := New(c.options)
		if err == nil {
			g.Close()
		}
		check(c.name, err, c.code, c.message, c.prefix)
	}
	o := DefaultClientOptions()
	o.Servers = []string{"http://127.0.0.1:1"}
	o.Layout = String("")
	c, err := NewClient(o)
	if err == nil {
		c.Close()
	}
	check("ClientOptions.Layout", err, CodeInvalidLayout, layoutEmpty, true)
	// nil is not given: the table's default namespace and layout.
	g, err := New(Options{DatacenterID: Uint64(1), WorkerID: Uint64(1)})
	if err != nil {
		t.Fatalf("nil Namespace and Layout: %v", err)
	}
	defer g.Close()
	if layout := g.Layout(); layout != "twitter" {
		t.Errorf("nil Layout gave layout %q, not the default twitter", layout)
	}
}
