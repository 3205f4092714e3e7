package flakery

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestClientTLS runs against two https:// servers that tests/client/test_tls.py starts (their
// URLs, the CA file and the first server's PID in the environment): IDs with the CA as an
// option while the first server is killed midway, written to FLAKERY_TEST_TLS_OUT; a server
// of mutual TLS without a client certificate (ErrTLSFailed); a token over http:// to a host
// that is not loopback, refused when built.
func TestClientTLS(t *testing.T) {
	servers := os.Getenv("FLAKERY_TEST_TLS_SERVERS")
	if servers == "" {
		t.Skip("FLAKERY_TEST_TLS_SERVERS is not set: tests/client/test_tls.py runs this test")
	}
	o := clientOptions(strings.Split(servers, ",")...)
	o.ServerCA = String(os.Getenv("FLAKERY_TEST_TLS_CA"))
	// Blocks of 100 asked for when needed, the first server first: the second half asks the
	// killed server, then the other.
	o.PreferFirst, o.NoPrefetch, o.MinBlock, o.MaxBlock = true, true, 100, 100
	c, err := NewClient(o)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	first, err := c.NextIDs(500)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(os.Getenv("FLAKERY_TEST_TLS_KILL"))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	second, err := c.NextIDs(500)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for _, id := range append(first, second...) {
		out.WriteString(strconv.FormatInt(id, 10) + "\n")
	}
	if err := os.WriteFile(os.Getenv("FLAKERY_TEST_TLS_OUT"), []byte(out.String()), 0o600); err != nil {
		t.Fatal(err)
	}

	o.Servers = []string{os.Getenv("FLAKERY_TEST_TLS_MTLS_SERVER")}
	m, err := NewClient(o)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if _, err := m.NextID(); !errors.Is(err, ErrTLSFailed) || !strings.Contains(err.Error(), "no client certificate") {
		t.Fatalf("mutual TLS without a certificate gave %v", err)
	}

	o.Servers, o.Token = []string{"http://10.0.0.1:9"}, String("s3cret-go")
	if _, err := NewClient(o); !errors.Is(err, ErrInvalidArgument) ||
		!strings.Contains(err.Error(), "in clear") || strings.Contains(err.Error(), "s3cret-go") {
		t.Fatalf("a token in clear gave %v", err)
	}
}
