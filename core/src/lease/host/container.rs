//! Whether this process may be in a container, where the host-local lease directory it sees
//! is not the one its neighbours see: each container has its own `/run`, so every replica
//! would lease node 0. Heuristics, each cheap and each a reason to refuse the implicit
//! default (an explicit `FLAKERY_LEASE_DIR` is the operator's word that it is shared):
//!
//! - `/.dockerenv` (Docker), `/run/.containerenv` (Podman), `/run/systemd/container`
//!   (systemd-nspawn and others that follow systemd's container interface);
//! - `KUBERNETES_SERVICE_HOST` in the environment (every Kubernetes pod has it);
//! - `/proc/1/cgroup` naming a container runtime (docker, kubepods, containerd, libpod, lxc);
//! - the root file system mounted as an overlay (`/proc/self/mountinfo`), as image-based
//!   containers do;
//! - `/run/lock` not being the directory that PID 1 sees (`/proc/1/root/run/lock`, readable
//!   only with the right privileges): a private mount namespace with its own `/run`.

use std::os::unix::fs::MetadataExt;

/// The first sign found that this is a container, in words naming it; `None` if none.
pub fn container_sign() -> Option<String> {
    for file in [
        "/.dockerenv",
        "/run/.containerenv",
        "/run/systemd/container",
    ] {
        if std::fs::symlink_metadata(file).is_ok() {
            return Some(format!("{file} exists"));
        }
    }
    if std::env::var_os("KUBERNETES_SERVICE_HOST").is_some() {
        return Some("KUBERNETES_SERVICE_HOST is set".into());
    }
    if let Some(text) = read_small("/proc/1/cgroup") {
        for runtime in ["docker", "kubepods", "containerd", "libpod", "lxc"] {
            if text.contains(runtime) {
                return Some(format!("/proc/1/cgroup names {runtime}"));
            }
        }
    }
    if let Some(text) = read_small("/proc/self/mountinfo") {
        if root_is_overlay(&text) {
            return Some("the root file system is an overlay mount".into());
        }
    }
    if let (Ok(ours), Ok(init)) = (
        std::fs::metadata("/run/lock"),
        std::fs::metadata("/proc/1/root/run/lock"),
    ) {
        if (ours.dev(), ours.ino()) != (init.dev(), init.ino()) {
            return Some("/run/lock is not the directory that PID 1 sees".into());
        }
    }
    None
}

/// A bounded read: these files are small, and nothing here may read without limit.
fn read_small(path: &str) -> Option<String> {
    use std::io::Read;
    let mut text = String::new();
    std::fs::File::open(path)
        .ok()?
        .take(1 << 20)
        .read_to_string(&mut text)
        .ok()?;
    Some(text)
}

/// Whether the mount at `/` is an overlay: mountinfo lines are
/// `id parent dev root mountpoint opts [optional...] - fstype source superopts`.
fn root_is_overlay(mountinfo: &str) -> bool {
    mountinfo.lines().any(|line| {
        let mut halves = line.splitn(2, " - ");
        let (Some(head), Some(tail)) = (halves.next(), halves.next()) else {
            return false;
        };
        let mount_point = head.split_whitespace().nth(4);
        let fstype = tail.split_whitespace().next().unwrap_or("");
        mount_point == Some("/") && (fstype == "overlay" || fstype == "fuse-overlayfs")
    })
}

#[cfg(test)]
mod tests {
    use super::root_is_overlay;

    #[test]
    fn an_overlay_root_is_seen_and_an_ext4_root_is_not() {
        let overlay = "540 480 0:51 / / rw,relatime master:1 - overlay overlay rw,lowerdir=/a\n";
        let ext4 = "29 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n\
                    540 29 0:51 / /var/lib/x rw - overlay overlay rw\n";
        assert!(root_is_overlay(overlay));
        assert!(!root_is_overlay(ext4));
    }
}
