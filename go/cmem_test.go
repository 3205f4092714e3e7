package flakery

import "testing"

// What the package copies into C memory for a call (a token, a database URL with its
// password) is wiped before it is freed, not left readable in freed memory.
func TestCopiesForCAreWiped(t *testing.T) {
	var mem cMem
	defer mem.free()
	mem.add("DatabaseURL", "postgres://user:secret-pw@127.0.0.1/db")
	mem.fields("Fields", map[string]uint64{"version": 1})
	if got := string(mem.block(0)); got != "postgres://user:secret-pw@127.0.0.1/db\x00" {
		t.Fatalf("the copy is %q", got)
	}
	mem.wipe()
	for i := range mem.blocks {
		for _, b := range mem.block(i) {
			if b != 0 {
				t.Fatalf("block %d is not wiped: %q", i, mem.block(i))
			}
		}
	}
}
