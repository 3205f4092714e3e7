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
