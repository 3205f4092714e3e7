package flakery

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// zooKeeper is a server started by tests/zookeeper/zkserver.py on an ephemeral port.
type zooKeeper struct {
	Pid     int    `json:"pid"`
	Port    int    `json:"port"`
	Connect string `json:"connect"`
	Dir     string `json:"dir"`
}

var zkHarness = filepath.Join("..", "tests", "zookeeper", "zkserver.py")

func startZooKeeper(t *testing.T) *zooKeeper {
	t.Helper()
	if _, err := os.Stat("/usr/share/java/zookeeper.jar"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("ZooKeeper is not installed, and CI=true: no test may be skipped")
		}
		t.Skip("!!! ZooKeeper is not installed: ZooKeeper tests SKIPPED !!!")
	}
	out, err := exec.Command("python3", zkHarness, "start").Output()
	if err != nil {
		t.Fatalf("zkserver.py start: %v", err)
	}
	var zk zooKeeper
	if err := json.Unmarshal(out, &zk); err != nil {
		t.Fatalf("zkserver.py start printed %q: %v", out, err)
	}
	t.Cleanup(func() {
		zk.signal(t, "resume")
		_ = exec.Command("python3", zkHarness, "stop", strconv.Itoa(zk.Pid), zk.Dir).Run()
	})
	return &zk
}

func (zk *zooKeeper) signal(t *testing.T, what string) {
	if err := exec.Command("python3", zkHarness, what, strconv.Itoa(zk.Pid)).Run(); err != nil {
		t.Fatalf("zkserver.py %s: %v", what, err)
	}
}

// clients counts the established TCP connections whose far end is the server's port.
func (zk *zooKeeper) clients() int {
	count := 0
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		data, err := os.ReadFile(table)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n")[1:] {
			fields := strings.Fields(line)
			if len(fields) < 4 {
				continue
			}
			remote := fields[2][strings.LastIndexByte(fields[2], ':')+1:]
			port, err := strconv.ParseInt(remote, 16, 32)
			if err == nil && int(port) == zk.Port && fields[3] == "01" {
				count++
			}
		}
	}
	return count
}

// A generator collected while its ZooKeeper is stopped: the finalizer frees it and returns
// before the server can answer anything, while the lease's client still waits for the
// release (its connection open: a client that gave up on the release closes it). The
// release is carried in the background.
func TestFinalizerReturnsWhileZooKeeperIsPaused(t *testing.T) {
	zk := startZooKeeper(t)
	// A long session: the release waits up to half of it for the server before giving up.
	g, err := New(Options{ZooKeeper: String(zk.Connect), Namespace: String("go-finalizer"), SessionTimeoutMs: Uint64(20000)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.NextIDs(10); err != nil {
		t.Fatal(err)
	}
	if n := zk.clients(); n != 1 {
		t.Fatalf("%d connections to the server, not 1", n)
	}
	// The server stays paused until the hook has reported: the finalizer ran while it could
	// answer nothing. Its client still connected means the finalizer did not wait for the
	// release to give up.
	type seen struct{ connected bool }
	freed := make(chan seen, 1)
	// Never blocks: a generator of an earlier test finalized now as well must not stop the
	// finalizer goroutine (and every finalizer after it) on a full channel.
	hook := func() {
		select {
		case freed <- seen{zk.clients() == 1}:
		default:
		}
	}
	afterFree.Store(&hook)
	defer afterFree.Store(nil)

	zk.signal(t, "pause")
	// g is reachable until here, no further: a collection earlier (garbage of the tests
	// before makes one likely) would free it before the hook is set and the server paused,
	// and this test would wait forever. (`g = nil` is a dead store, which keeps nothing.)
	runtime.KeepAlive(g)
	var when seen
	for done := false; !done; {
		runtime.GC()
		select {
		case when = <-freed:
			done = true
		default:
			runtime.Gosched()
		}
	}
	zk.signal(t, "resume")
	if !when.connected {
		t.Fatal("the finalizer waited until the release gave up")
	}
}
