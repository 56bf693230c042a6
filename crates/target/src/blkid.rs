//! util-linux's `blkid` as the authority on on-disk signatures.
//!
//! libblkid knows every format util-linux ships a prober for (`blkid -k` lists them: the
//! motherboard RAID members, DDF, MD, LVM, LUKS, bcache, ZFS, dozens of filesystems). ssdlab runs
//! its low-level probe rather than linking the library, so the crate builds on a machine without
//! libblkid's headers, and a missing or broken `blkid` only means falling back to the built-in
//! detector ([`crate::signature::detect_signature`]) with a note.
//!
//! The probe is read-only and leaves no trace: `blkid -p` (low-level probing, which bypasses the
//! cache) with `-c /dev/null` (never a cache file) and `-o udev` output, which names every
//! signature of an ambivalent result (`ID_FS_AMBIVALENT`). It runs under a timeout and is killed
//! when the timeout passes; the caller never waits longer than that.
//!
//! Exit status of `blkid -p`: 0 something found, 2 nothing found (or the device could not be
//! opened, with a message on stderr), 8 ambivalent (several signatures), anything else an error.

use crate::error::Refusal;
use crate::signature::{
    signature_for_blkid_pttype, signature_for_blkid_type, Signature, SignatureClass,
};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long one probe may take before it is abandoned (the device is then judged by the
/// built-in detector alone).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// Where `blkid` is looked for after `$PATH` (it lives in an `sbin` directory, which is not on
/// every user's path).
const SBIN_DIRS: &[&str] = &["/usr/sbin", "/sbin", "/usr/bin", "/bin"];

/// What blkid says a signature is used for (`USAGE`; `PartitionTable` for a `PTTYPE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Usage {
    Filesystem,
    Raid,
    Crypto,
    Other,
    PartitionTable,
    /// A usage this version does not know.
    Unknown,
}

impl Usage {
    fn parse(s: &str) -> Usage {
        match s {
            "filesystem" => Usage::Filesystem,
            "raid" => Usage::Raid,
            "crypto" => Usage::Crypto,
            "other" => Usage::Other,
            _ => Usage::Unknown,
        }
    }

    fn text(self) -> &'static str {
        match self {
            Usage::Filesystem => "filesystem",
            Usage::Raid => "raid",
            Usage::Crypto => "crypto",
            Usage::Other => "other",
            Usage::PartitionTable => "partition table",
            Usage::Unknown => "unknown usage",
        }
    }
}

/// One signature blkid reported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// blkid's `TYPE` (`isw_raid_member`, `ext4`…) or `PTTYPE` (`dos`, `gpt`…).
    pub type_name: String,
    pub usage: Usage,
    /// `VERSION`, when blkid reported one.
    pub version: Option<String>,
}

impl Found {
    /// The [`Signature`] ssdlab shows for it, when the type is one it has a description for.
    pub fn signature(&self) -> Option<Signature> {
        if self.usage == Usage::PartitionTable {
            signature_for_blkid_pttype(&self.type_name)
        } else {
            signature_for_blkid_type(&self.type_name)
        }
    }

    /// Why a device with this signature is refused (one line, see [`Refusal`]).
    pub fn refusal(&self) -> Refusal {
        match self.signature() {
            Some(sig) => Refusal::Signature(sig),
            None => Refusal::OtherSignature {
                type_name: self.type_name.clone(),
                usage: self.usage.text().to_string(),
            },
        }
    }

    /// RAID members first, then other volumes, filesystems, partition tables.
    fn rank(&self) -> u8 {
        let class = self.signature().map(|s| s.class);
        match (class, self.usage) {
            (Some(SignatureClass::RaidMember), _) | (None, Usage::Raid) => 0,
            (Some(SignatureClass::Volume), _) | (None, Usage::Crypto | Usage::Other) => 1,
            (Some(SignatureClass::Filesystem), _) | (None, Usage::Filesystem | Usage::Unknown) => 2,
            (Some(SignatureClass::PartitionTable), _) | (None, Usage::PartitionTable) => 3,
        }
    }
}

/// The answer of the authority.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Probe {
    /// blkid found signatures: one, or several (an ambivalent result, exit status 8). Ordered
    /// RAID members first, then other volumes, filesystems, partition tables. Empty only when an
    /// ambivalent result did not name its signatures.
    Found(Vec<Found>),
    /// blkid looked and found nothing.
    Nothing,
    /// No answer: blkid is not installed, could not open the device, failed or timed out. The
    /// text says why, for a note.
    Unavailable(String),
}

impl Probe {
    /// The refusal for a [`Probe::Found`] result: its first (most telling) signature.
    pub fn refusal(&self) -> Option<Refusal> {
        match self {
            Probe::Found(found) => Some(match found.first() {
                Some(f) => f.refusal(),
                None => Refusal::OtherSignature {
                    type_name: "ambivalent".to_string(),
                    usage: "several signatures".to_string(),
                },
            }),
            _ => None,
        }
    }
}

/// How to ask blkid: which program (if any) and how long to wait.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blkid {
    program: Option<PathBuf>,
    timeout: Duration,
}

impl Blkid {
    /// The system's `blkid`: the first one on `$PATH`, else in the usual `sbin` directories.
    /// When there is none, every probe answers [`Probe::Unavailable`].
    pub fn system() -> Blkid {
        let path_dirs = std::env::var_os("PATH")
            .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
            .unwrap_or_default();
        let program = path_dirs
            .into_iter()
            .chain(SBIN_DIRS.iter().map(PathBuf::from))
            .map(|d| d.join("blkid"))
            .find(|p| is_executable(p));
        Blkid {
            program,
            timeout: DEFAULT_TIMEOUT,
        }
    }

    /// A specific program (for tests, or a blkid outside the usual places).
    pub fn at(program: impl Into<PathBuf>) -> Blkid {
        Blkid {
            program: Some(program.into()),
            timeout: DEFAULT_TIMEOUT,
        }
    }

    /// No authority: the built-in detector alone decides.
    pub fn none() -> Blkid {
        Blkid {
            program: None,
            timeout: DEFAULT_TIMEOUT,
        }
    }

    /// The same, with another timeout.
    pub fn with_timeout(mut self, timeout: Duration) -> Blkid {
        self.timeout = timeout;
        self
    }

    /// The program that will be run, if any.
    pub fn program(&self) -> Option<&Path> {
        self.program.as_deref()
    }

    /// Runs `blkid -p -c /dev/null -o udev -- DEVICE` (read-only) and interprets its answer.
    /// Never waits longer than the timeout.
    pub fn probe(&self, device: &Path) -> Probe {
        let Some(program) = &self.program else {
            return Probe::Unavailable("blkid is not installed".to_string());
        };
        let mut child = match Command::new(program)
            .args(["-p", "-c", "/dev/null", "-o", "udev", "--"])
            .arg(device)
            .env("LC_ALL", "C")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
        {
            Ok(c) => c,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Probe::Unavailable(format!("{} is not installed", program.display()))
            }
            Err(e) => return Probe::Unavailable(format!("cannot run {}: {e}", program.display())),
        };
        // Read both pipes on their own threads so a chatty child cannot block on a full pipe.
        let reader = |pipe: Option<Box<dyn Read + Send>>| {
            std::thread::spawn(move || {
                let mut buf = Vec::new();
                if let Some(p) = pipe {
                    let _ = p.take(1 << 20).read_to_end(&mut buf);
                }
                buf
            })
        };
        let out = reader(
            child
                .stdout
                .take()
                .map(|p| Box::new(p) as Box<dyn Read + Send>),
        );
        let err = reader(
            child
                .stderr
                .take()
                .map(|p| Box::new(p) as Box<dyn Read + Send>),
        );
        let deadline = Instant::now() + self.timeout;
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(2));
                }
                Ok(None) => {
                    let _ = child.kill();
                    // Reap it in the background: a process stuck in the kernel may take a while
                    // to die, and the caller must not wait for it.
                    std::thread::spawn(move || {
                        let _ = child.wait();
                    });
                    return Probe::Unavailable(format!(
                        "blkid did not answer within {} s",
                        self.timeout.as_secs_f64()
                    ));
                }
                Err(e) => return Probe::Unavailable(format!("cannot wait for blkid: {e}")),
            }
        };
        let stdout = out.join().unwrap_or_default();
        let stderr = err.join().unwrap_or_default();
        parse_udev(
            status.code(),
            &String::from_utf8_lossy(&stdout),
            &String::from_utf8_lossy(&stderr),
        )
    }
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Undoes blkid's `blkid_encode_string` escapes (`\x20` for a space…).
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && b.get(i + 1) == Some(&b'x') {
            if let Some(v) = s
                .get(i + 2..i + 4)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
            {
                out.push(v);
                i += 4;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Interprets the exit status (`None`: killed by a signal), stdout (`-o udev`) and stderr of
/// `blkid -p`. Pure, so every case can be tested without blkid.
pub fn parse_udev(status: Option<i32>, stdout: &str, stderr: &str) -> Probe {
    let first_err = stderr.lines().map(str::trim).find(|l| !l.is_empty());
    let mut fs_type = None;
    let mut fs_usage = None;
    let mut fs_version = None;
    let mut pt_type = None;
    let mut ambivalent = None;
    for line in stdout.lines() {
        let Some((key, value)) = line.trim().split_once('=') else {
            continue;
        };
        let value = unescape(value);
        match key {
            "ID_FS_TYPE" => fs_type = Some(value),
            "ID_FS_USAGE" => fs_usage = Some(value),
            "ID_FS_VERSION" => fs_version = Some(value),
            "ID_PART_TABLE_TYPE" => pt_type = Some(value),
            "ID_FS_AMBIVALENT" => ambivalent = Some(value),
            _ => {}
        }
    }
    let mut found = Vec::new();
    match status {
        Some(0) => {
            if let Some(t) = fs_type.filter(|t| !t.is_empty()) {
                found.push(Found {
                    type_name: t,
                    usage: Usage::parse(fs_usage.as_deref().unwrap_or("")),
                    version: fs_version,
                });
            }
            if let Some(t) = pt_type.filter(|t| !t.is_empty()) {
                found.push(Found {
                    type_name: t,
                    usage: Usage::PartitionTable,
                    version: None,
                });
            }
            // Only details of the partition the device itself is (ID_PART_ENTRY_*): no content.
            if found.is_empty() {
                return Probe::Nothing;
            }
        }
        Some(2) => {
            return match first_err {
                // blkid could not open or read the device.
                Some(e) => Probe::Unavailable(format!("blkid failed: {e}")),
                None => Probe::Nothing,
            };
        }
        Some(8) => {
            // "usage:type[:version] usage:type[:version] …"
            for entry in ambivalent.as_deref().unwrap_or("").split_whitespace() {
                let mut parts = entry.splitn(3, ':');
                let (Some(usage), Some(t)) = (parts.next(), parts.next()) else {
                    continue;
                };
                found.push(Found {
                    type_name: unescape(t),
                    usage: Usage::parse(&unescape(usage)),
                    version: parts.next().map(unescape),
                });
            }
        }
        Some(code) => {
            return Probe::Unavailable(match first_err {
                Some(e) => format!("blkid failed (exit status {code}): {e}"),
                None => format!("blkid failed (exit status {code})"),
            })
        }
        None => return Probe::Unavailable("blkid was killed by a signal".to_string()),
    }
    found.sort_by_key(Found::rank);
    Probe::Found(found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt as _;

    fn found(t: &str, usage: Usage) -> Found {
        Found {
            type_name: t.into(),
            usage,
            version: None,
        }
    }

    #[test]
    fn parses_a_filesystem_and_a_raid_member() {
        let out = "ID_FS_UUID=5e82\nID_FS_VERSION=1.0\nID_FS_TYPE=ext4\nID_FS_USAGE=filesystem\n";
        let p = parse_udev(Some(0), out, "");
        assert_eq!(
            p,
            Probe::Found(vec![Found {
                type_name: "ext4".into(),
                usage: Usage::Filesystem,
                version: Some("1.0".into()),
            }])
        );
        assert_eq!(
            p.refusal().unwrap().to_string(),
            "it holds an ext4 filesystem (use a device without data)"
        );
        let out = "ID_FS_VERSION=1.3.00\nID_FS_TYPE=isw_raid_member\nID_FS_USAGE=raid\n";
        assert_eq!(
            parse_udev(Some(0), out, "").refusal().unwrap().to_string(),
            "it is a member of an Intel RST (isw) RAID set (isw_raid_member)"
        );
    }

    #[test]
    fn partition_tables_and_partition_entries() {
        let p = parse_udev(Some(0), "ID_PART_TABLE_TYPE=dos\n", "");
        assert_eq!(
            p.refusal().unwrap().to_string(),
            "it has a partition table (MBR)"
        );
        let p = parse_udev(
            Some(0),
            "ID_PART_TABLE_UUID=x\nID_PART_TABLE_TYPE=PMBR\n",
            "",
        );
        assert_eq!(
            p.refusal().unwrap().to_string(),
            "it has a partition table (GPT)"
        );
        // A filesystem and a table: the filesystem is named.
        let p = parse_udev(
            Some(0),
            "ID_PART_TABLE_TYPE=dos\nID_FS_TYPE=vfat\nID_FS_USAGE=filesystem\n",
            "",
        );
        let Probe::Found(f) = &p else { panic!("{p:?}") };
        assert_eq!(f.len(), 2);
        assert_eq!(f[0].type_name, "vfat");
        // The device is itself a partition with nothing on it: only entry details.
        let out = "ID_PART_ENTRY_SCHEME=gpt\nID_PART_ENTRY_UUID=1234\nID_PART_ENTRY_NUMBER=1\n";
        assert_eq!(parse_udev(Some(0), out, ""), Probe::Nothing);
    }

    #[test]
    fn nothing_errors_and_ambivalence() {
        assert_eq!(parse_udev(Some(2), "", ""), Probe::Nothing);
        assert_eq!(
            parse_udev(Some(2), "", "blkid: error: /dev/sdz: Permission denied\n"),
            Probe::Unavailable("blkid failed: blkid: error: /dev/sdz: Permission denied".into())
        );
        assert_eq!(
            parse_udev(Some(4), "", "blkid: unrecognized option '--x'\n"),
            Probe::Unavailable(
                "blkid failed (exit status 4): blkid: unrecognized option '--x'".into()
            )
        );
        assert!(matches!(parse_udev(None, "", ""), Probe::Unavailable(_)));

        let p = parse_udev(
            Some(8),
            "ID_FS_AMBIVALENT=filesystem:ext4:1.0 raid:isw_raid_member:1.3.00 other:swap\n",
            "",
        );
        let Probe::Found(f) = &p else { panic!("{p:?}") };
        assert_eq!(
            f.iter().map(|f| f.type_name.as_str()).collect::<Vec<_>>(),
            ["isw_raid_member", "swap", "ext4"],
            "RAID member first"
        );
        assert_eq!(f[0].version.as_deref(), Some("1.3.00"));
        // Ambivalent without the list (another output format): still a refusal.
        let p = parse_udev(Some(8), "", "ambivalent result");
        assert_eq!(p, Probe::Found(vec![]));
        assert!(p
            .refusal()
            .unwrap()
            .to_string()
            .contains("ambivalent signature (several signatures)"));
        // An unknown type is still refused, with blkid's words.
        let p = parse_udev(
            Some(0),
            "ID_FS_TYPE=future\\x20fs\nID_FS_USAGE=crypto\n",
            "",
        );
        assert_eq!(
            p.refusal().unwrap().to_string(),
            "blkid finds a future fs signature (crypto) on it (use a device without data)"
        );
        assert_eq!(found("x", Usage::Other).rank(), 1);
    }

    fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        p
    }

    #[test]
    fn missing_failing_and_hanging_programs_are_unavailable() {
        let dir = tempfile::tempdir().unwrap();
        let dev = dir.path().join("dev.img");
        std::fs::write(&dev, [0u8; 4096]).unwrap();

        let p = Blkid::none().probe(&dev);
        assert_eq!(p, Probe::Unavailable("blkid is not installed".into()));
        let p = Blkid::at(dir.path().join("no-such-blkid")).probe(&dev);
        assert!(
            matches!(&p, Probe::Unavailable(w) if w.ends_with("is not installed")),
            "{p:?}"
        );

        let fails = script(dir.path(), "fails", "echo oops >&2; exit 4");
        let p = Blkid::at(&fails).probe(&dev);
        if matches!(&p, Probe::Unavailable(w) if w.starts_with("cannot run")) {
            // A temp directory mounted noexec: scripts cannot stand in for blkid here (in CI
            // they must).
            ssdlab_testkit::skip(&format!(
                "the script cases: the temp directory does not run scripts ({p:?})"
            ));
            return;
        }
        assert_eq!(
            p,
            Probe::Unavailable("blkid failed (exit status 4): oops".into())
        );

        // The arguments: low-level probe, no cache, udev output, the device after "--".
        let echo = script(
            dir.path(),
            "echo",
            &format!(
                r#"[ "$*" = "-p -c /dev/null -o udev -- {}" ] || exit 4
echo ID_FS_TYPE=ddf_raid_member; echo ID_FS_USAGE=raid; exit 0"#,
                dev.display()
            ),
        );
        let p = Blkid::at(&echo).probe(&dev);
        assert_eq!(
            p.refusal().unwrap().to_string(),
            "it is a member of a SNIA DDF RAID set (ddf_raid_member)"
        );

        let hangs = script(dir.path(), "hangs", "exec sleep 30");
        let t = Instant::now();
        let p = Blkid::at(&hangs)
            .with_timeout(Duration::from_millis(200))
            .probe(&dev);
        assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
        assert!(
            matches!(&p, Probe::Unavailable(w) if w.contains("did not answer")),
            "{p:?}"
        );
    }
}
