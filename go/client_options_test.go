package flakery

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// clientTableRow is one row of docs/client.md#options (rendered from the core's options table,
// core/src/option_table/client.rs, and compared with it by the core's tests).
type clientTableRow struct {
	goName, values, defaultDoc string
}

// docsTable is the cells of each row of the table under heading in ../docs/file, or skips
// where the docs are not beside the package (a release tarball's go/ folder).
func docsTable(t *testing.T, file, heading string) [][]string {
	text, err := os.ReadFile("../docs/" + file)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skipf("no docs/%s beside the package: %v", file, err)
	}
	_, section, _ := strings.Cut(string(text), "\n"+heading+"\n")
	var rows [][]string
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "| `") {
			if len(rows) > 0 {
				break
			}
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		rows = append(rows, cells)
	}
	if len(rows) == 0 {
		t.Fatalf("the table %q of docs/%s has no rows", heading, file)
	}
	return rows
}

func clientTable(t *testing.T) []clientTableRow {
	var rows []clientTableRow
	for _, cells := range docsTable(t, "client.md", "## Options") {
		rows = append(rows, clientTableRow{strings.Trim(cells[4], "`"), cells[7], cells[8]})
	}
	return rows
}

var tableNumber = regexp.MustCompile(`^(\d+)( ms)?$`)

// Every number of the table is DefaultClientOptions' (which the C library's init writes); a
// zero duration or block size is refused, never read as the default; the smallest value is
// taken. Named as Go spells each option.
func TestClientOptionsAreTheTables(t *testing.T) {
	defaults := reflect.ValueOf(DefaultClientOptions())
	numbers := 0
	for _, row := range clientTable(t) {
		field := defaults.FieldByName(row.goName)
		if !field.IsValid() {
			t.Fatalf("the table's Go name %s is no field of ClientOptions", row.goName)
		}
		m := tableNumber.FindStringSubmatch(row.defaultDoc)
		if m == nil {
			continue
		}
		numbers++
		n, _ := strconv.ParseInt(m[1], 10, 64)
		want := n
		if m[2] != "" {
			want = int64(time.Duration(n) * time.Millisecond)
		}
		if field.Int() != want {
			t.Errorf("DefaultClientOptions().%s is %v, the table says %s", row.goName, field, row.defaultDoc)
		}

		set := func(v int64) error {
			o := DefaultClientOptions()
			o.Servers = []string{"http://127.0.0.1:1"}
			f := reflect.ValueOf(&o).Elem().FieldByName(row.goName)
			f.SetInt(v)
			if row.goName == "MaxBlock" && v < int64(o.MinBlock) {
				o.MinBlock = int(v)
			}
			c, err := NewClient(o)
			if err == nil {
				c.Close()
			}
			return err
		}
		if m[2] != "" {
			// A duration: from 1 ms, as the table's values say; what is less is refused as
			// the core refuses a Rust Duration, in Go's name and Go's way of showing one.
			if !strings.HasPrefix(row.values, "1 ms to 2^64-1 ms") {
				t.Errorf("%s: the table's values are %q", row.goName, row.values)
			}
			for _, bad := range []time.Duration{0, -time.Second, 999 * time.Microsecond} {
				err := set(int64(bad))
				wantMessage := fmt.Sprintf("%s must be from 1 ms to 2^64-1 ms, not %v", row.goName, bad)
				var e *Error
				if !errors.As(err, &e) || e.Code != CodeInvalidArgument || e.Message != wantMessage {
					t.Errorf("%s = %v gave %v, wanted invalid_argument: %s", row.goName, bad, err, wantMessage)
				}
			}
			if err := set(int64(time.Millisecond)); err != nil {
				t.Errorf("%s = 1ms: %v", row.goName, err)
			}
			continue
		}
		// A block size: from 1, checked by the core with both limits in one message.
		for _, bad := range []int64{0, -1} {
			if err := set(bad); !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("%s = %d gave %v", row.goName, bad, err)
			}
		}
		if err := set(1); err != nil {
			t.Errorf("%s = 1: %v", row.goName, err)
		}
	}
	if numbers != 5 {
		t.Errorf("%d rows of numbers in the table, this test knows 5", numbers)
	}
	o := DefaultClientOptions()
	if o.NoPrefetch || o.PreferFirst || o.Servers != nil || o.Token != nil || o.Layout != nil || o.Fallback != nil {
		t.Errorf("DefaultClientOptions() sets more than the table's defaults: %+v", o)
	}
}

// The zero ClientOptions is refused (its MaxAge first): a caller starts from
// DefaultClientOptions().
func TestZeroClientOptionsAreRefused(t *testing.T) {
	_, err := NewClient(ClientOptions{Servers: []string{"http://127.0.0.1:1"}})
	if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "MaxAge must be from 1 ms") {
		t.Fatalf("the zero ClientOptions gave %v", err)
	}
}
