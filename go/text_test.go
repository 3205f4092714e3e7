package flakery

import (
	"errors"
	"math"
	"math/rand"
	"sort"
	"strings"
	"testing"
)

func TestTextFormsRoundTripAndSortAsTheIDs(t *testing.T) {
	ids := []int64{0, 1, 31, 32, 61, 62, 4095, 1541815603606036480, math.MaxInt64}
	rng := rand.New(rand.NewSource(7))
	for i := 0; i < 1000; i++ {
		ids = append(ids, rng.Int63())
	}
	for _, form := range []struct {
		name   string
		length int
		to     func(int64) (string, error)
		from   func(string) (int64, error)
	}{
		{"base32", 13, ToBase32, FromBase32},
		{"base62", 11, ToBase62, FromBase62},
	} {
		texts := make([]string, len(ids))
		for i, id := range ids {
			text, err := form.to(id)
			if err != nil {
				t.Fatalf("%s(%d): %v", form.name, id, err)
			}
			if len(text) != form.length {
				t.Fatalf("%s(%d) = %q, not %d characters", form.name, id, text, form.length)
			}
			back, err := form.from(text)
			if err != nil || back != id {
				t.Fatalf("%s: %d -> %q -> %d, %v", form.name, id, text, back, err)
			}
			texts[i] = text
		}
		sorted := append([]int64(nil), ids...)
		sort.Slice(sorted, func(a, b int) bool { return sorted[a] < sorted[b] })
		sort.Strings(texts)
		for i, text := range texts {
			id, _ := form.from(text)
			if id != sorted[i] {
				t.Fatalf("%s: string order differs from ID order at %d", form.name, i)
			}
		}
	}
	if got, _ := ToBase32(math.MaxInt64); got != "7ZZZZZZZZZZZZ" {
		t.Fatalf("ToBase32(MaxInt64) = %q", got)
	}
	if got, _ := FromBase32(strings.ToLower("0000000000O1L")); got != 33 {
		t.Fatalf("Crockford's aliases: got %d", got)
	}
}

func TestBadTextFormsNameTheCharacter(t *testing.T) {
	for _, c := range []struct {
		text   string
		from   func(string) (int64, error)
		needle string
	}{
		{"00000000000U0", FromBase32, "'U'"},
		{"0000000000-", FromBase62, "'-'"},
		{"123", FromBase32, "3 characters"},
		{"8000000000000", FromBase32, "above 2^63-1"},
		{"0000000000\x0000", FromBase32, "NUL"},
	} {
		_, err := c.from(c.text)
		if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), c.needle) {
			t.Errorf("%q: %v, want invalid_argument naming %s", c.text, err, c.needle)
		}
	}
	if _, err := ToBase32(-1); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("ToBase32(-1): %v", err)
	}
}

func TestDatabaseOptionsAreValidatedWithoutShowingThePassword(t *testing.T) {
	_, err := New(Options{DatabaseURL: String("redis://flakery:s3cret-pw@127.0.0.1:1/ids")})
	if !errors.Is(err, ErrInvalidArgument) || strings.Contains(err.Error(), "s3cret-pw") {
		t.Errorf("bad scheme: %v", err)
	}
	_, err = New(Options{DatabaseURL: String("postgres://flakery:s3cret-pw@127.0.0.1:1/ids"), DatabaseMode: String("leaf")})
	if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "leaf") || strings.Contains(err.Error(), "s3cret-pw") {
		t.Errorf("bad mode: %v", err)
	}
	// Port 1 on loopback refuses at once: a database that cannot be reached at start.
	_, err = New(Options{DatabaseURL: String("postgres://flakery:s3cret-pw@127.0.0.1:1/ids")})
	if !errors.Is(err, ErrCoordinatorUnavailable) || !strings.Contains(err.Error(), "127.0.0.1") || strings.Contains(err.Error(), "s3cret-pw") {
		t.Errorf("unreachable: %v", err)
	}
}
