//! Device probing and safety checks against real files and loop devices.
//!
//! Loop-device tests need root and `/dev/loop-control`; without them they print
//! "skipping: <reason>" to stderr and return. Every attached loop device is detached by a Drop
//! guard (and every mount unmounted) even when a test panics. Only image files and temp
//! directories are ever deleted, never device nodes.

use std::fs::{self, File};
use std::os::unix::fs::{FileExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use ssdlab_target::{
    check_block_device_writable, check_block_device_writable_with, is_block_device, lay_out,
    open_target, probe, Blkid, DeviceError, LayoutError, PathKind, Refusal, SignatureClass,
    TargetInfo,
};

mod common;

/// Loop devices and mounts are machine-global: run those tests one at a time.
static LOOP_LOCK: Mutex<()> = Mutex::new(());

fn lock() -> std::sync::MutexGuard<'static, ()> {
    LOOP_LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// Lays a file out and keeps it (the layout's undo record is dropped, not used).
fn prepare_file(info: &TargetInfo, needed: u64) -> Result<TargetInfo, DeviceError> {
    match lay_out(info, needed, None) {
        Ok(l) => Ok(l.info),
        Err(LayoutError::Refused(e)) => Err(e),
        Err(e) => panic!("layout failed after writing: {e}"),
    }
}

use ssdlab_testkit::skip;

/// An attached loop device, detached on drop.
struct LoopDev {
    dev: PathBuf,
}

impl LoopDev {
    fn attach(img: &Path, partscan: bool) -> Result<LoopDev, String> {
        if !Path::new("/dev/loop-control").exists() {
            return Err("/dev/loop-control is missing".into());
        }
        let mut cmd = Command::new("losetup");
        cmd.args(["--find", "--show", "--direct-io=on"]);
        if partscan {
            cmd.arg("--partscan");
        }
        let out = cmd
            .arg(img)
            .output()
            .map_err(|e| format!("cannot run losetup: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "losetup failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        let dev = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        if !dev.starts_with("/dev/") {
            return Err(format!(
                "losetup printed an odd device name {}",
                dev.display()
            ));
        }
        let lo = LoopDev { dev };
        if partscan {
            // Kernels built without the partition parsers leave the table unread: let partx
            // (util-linux) read it in user space and add the partitions through BLKPG.
            let name = lo.name();
            let has_p1 = || Path::new(&format!("/sys/block/{name}/{name}p1")).exists();
            if !has_p1() {
                let _ = Command::new("partx").arg("-a").arg(&lo.dev).output();
            }
        }
        Ok(lo)
    }

    fn name(&self) -> String {
        self.dev.file_name().unwrap().to_string_lossy().into_owned()
    }
}

impl Drop for LoopDev {
    fn drop(&mut self) {
        let ok = Command::new("losetup")
            .arg("-d")
            .arg(&self.dev)
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        if !ok {
            eprintln!("warning: could not detach {}", self.dev.display());
        }
    }
}

/// A mount, unmounted on drop.
struct Mounted {
    dir: PathBuf,
}

impl Drop for Mounted {
    fn drop(&mut self) {
        let ok = Command::new("umount")
            .arg(&self.dir)
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        if !ok {
            eprintln!("warning: could not unmount {}", self.dir.display());
        }
    }
}

/// A sparse image file of `len` bytes in `dir`, with `patches` written at their offsets.
fn image(dir: &Path, name: &str, len: u64, patches: &[(u64, &[u8])]) -> PathBuf {
    let p = dir.join(name);
    let f = File::create(&p).unwrap();
    f.set_len(len).unwrap();
    for (off, bytes) in patches {
        f.write_all_at(bytes, *off).unwrap();
    }
    f.sync_all().unwrap();
    p
}

/// mkfs.ext4 on an image file; `false` when the tool is not there or fails.
fn mkfs_ext4(img: &Path) -> bool {
    Command::new("mkfs.ext4")
        .args(["-q", "-F"])
        .arg(img)
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

fn refusal<T: std::fmt::Debug>(r: Result<T, DeviceError>) -> (Refusal, String) {
    match r {
        Err(e @ DeviceError::Refused { .. }) => {
            let msg = e.to_string();
            let DeviceError::Refused { reason, .. } = e else {
                unreachable!()
            };
            (reason, msg)
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
}

const MIB: u64 = 1 << 20;

#[test]
fn blank_loop_device_probe_and_allow_destroy() {
    let _g = lock();
    let dir = tempfile::tempdir().unwrap();
    let img = image(dir.path(), "blank.img", 8 * MIB, &[]);
    let lo = match LoopDev::attach(&img, false) {
        Ok(lo) => lo,
        Err(e) => return skip(&e),
    };
    assert!(is_block_device(&lo.dev));
    let info = probe(&lo.dev).unwrap();
    assert_eq!(info.kind, PathKind::BlockDevice);
    assert!(info.exists);
    assert_eq!(info.size, 8 * MIB);
    assert_eq!(info.logical_block_size, 512);
    assert!(info.dio_offset_align >= 512 && info.dio_offset_align.is_power_of_two());
    assert!(info.dio_mem_align.is_power_of_two());
    assert!(info.direct_io_supported());

    let e = check_block_device_writable(&info, false).unwrap_err();
    assert!(matches!(e, DeviceError::AllowDestroyRequired { .. }), "{e}");
    assert!(e
        .to_string()
        .ends_with("writing to a block device requires --allow-destroy"));
    check_block_device_writable(&info, true).unwrap();

    // Opened for writing we hold it exclusively: a second check sees it as in use.
    let f = open_target(&info, true, true).unwrap();
    let (r, msg) = refusal(check_block_device_writable(&info, true));
    assert_eq!(r, Refusal::Exclusive, "{msg}");
    assert!(
        msg.contains("opened exclusively by another program"),
        "{msg}"
    );
    let e = open_target(&info, true, false).unwrap_err();
    assert!(
        matches!(
            e,
            DeviceError::Refused {
                reason: Refusal::Exclusive,
                ..
            }
        ),
        "{e}"
    );
    drop(f);
    // Read-only open never takes O_EXCL.
    let _r = open_target(&info, false, true).unwrap();
    check_block_device_writable(&info, true).unwrap();

    // prepare_file never touches a block device.
    let e = prepare_file(&info, 16 * MIB).unwrap_err();
    assert!(matches!(e, DeviceError::NotRegularFile { .. }), "{e}");
    assert_eq!(probe(&lo.dev).unwrap().size, 8 * MIB);
}

#[test]
fn ext4_signature_is_refused() {
    let _g = lock();
    let dir = tempfile::tempdir().unwrap();
    let img = image(dir.path(), "ext4.img", 8 * MIB, &[]);
    if !mkfs_ext4(&img) {
        eprintln!("mkfs.ext4 unavailable: writing a synthetic ext4 superblock");
        let f = fs::OpenOptions::new().write(true).open(&img).unwrap();
        f.write_all_at(&1000u32.to_le_bytes(), 1024).unwrap();
        f.write_all_at(&0xEF53u16.to_le_bytes(), 1080).unwrap();
        f.write_all_at(&1u32.to_le_bytes(), 1024 + 76).unwrap();
        f.write_all_at(&0x2c2u32.to_le_bytes(), 1024 + 0x60)
            .unwrap();
        f.sync_all().unwrap();
    }
    let lo = match LoopDev::attach(&img, false) {
        Ok(lo) => lo,
        Err(e) => return skip(&e),
    };
    let info = probe(&lo.dev).unwrap();
    // Still the --allow-destroy error first.
    assert!(matches!(
        check_block_device_writable(&info, false),
        Err(DeviceError::AllowDestroyRequired { .. })
    ));
    let (r, msg) = refusal(check_block_device_writable(&info, true));
    match r {
        Refusal::Signature(s) => {
            assert_eq!(s.name, "ext4");
            assert_eq!(s.class, SignatureClass::Filesystem);
        }
        other => panic!("expected an ext4 signature, got {other:?}"),
    }
    assert_eq!(
        msg,
        format!(
            "{}: refusing to write: it holds an ext4 filesystem (use a device without data)",
            lo.dev.display()
        )
    );
}

/// A DOS partition table with one Linux partition at 1 MiB, 2 MiB long.
fn mbr_bytes() -> Vec<u8> {
    let mut b = vec![0u8; 512];
    b[446 + 4] = 0x83;
    b[446 + 8..446 + 12].copy_from_slice(&2048u32.to_le_bytes());
    b[446 + 12..446 + 16].copy_from_slice(&4096u32.to_le_bytes());
    b[510] = 0x55;
    b[511] = 0xAA;
    b
}

#[test]
fn partition_tables_and_partitions_are_refused() {
    let _g = lock();
    let dir = tempfile::tempdir().unwrap();

    // MBR without partition scanning: found by its signature.
    let img = image(dir.path(), "mbr.img", 8 * MIB, &[(0, &mbr_bytes())]);
    let lo = match LoopDev::attach(&img, false) {
        Ok(lo) => lo,
        Err(e) => return skip(&e),
    };
    let info = probe(&lo.dev).unwrap();
    let (_, msg) = refusal(check_block_device_writable(&info, true));
    assert!(msg.ends_with("it has a partition table (MBR)"), "{msg}");
    drop(lo);

    // GPT (protective MBR + "EFI PART" header; CRCs are not checked).
    let mut pmbr = vec![0u8; 512];
    pmbr[446 + 4] = 0xEE;
    pmbr[446 + 8..446 + 12].copy_from_slice(&1u32.to_le_bytes());
    pmbr[446 + 12..446 + 16].copy_from_slice(&u32::MAX.to_le_bytes());
    pmbr[510] = 0x55;
    pmbr[511] = 0xAA;
    let img = image(
        dir.path(),
        "gpt.img",
        8 * MIB,
        &[(0, &pmbr), (512, b"EFI PART"), (8 * MIB - 512, b"EFI PART")],
    );
    let lo = LoopDev::attach(&img, false).unwrap();
    let info = probe(&lo.dev).unwrap();
    let (r, msg) = refusal(check_block_device_writable(&info, true));
    assert!(matches!(r, Refusal::Signature(s) if s.class == SignatureClass::PartitionTable));
    assert!(msg.ends_with("it has a partition table (GPT)"), "{msg}");
    drop(lo);

    // MBR with partition scanning: the kernel creates loopNp1, named in the refusal.
    let img = image(dir.path(), "mbr-p.img", 8 * MIB, &[(0, &mbr_bytes())]);
    let lo = LoopDev::attach(&img, true).unwrap();
    let info = probe(&lo.dev).unwrap();
    let (r, msg) = refusal(check_block_device_writable(&info, true));
    let want = format!("{}p1", lo.name());
    match r {
        Refusal::Partitions(parts) => assert_eq!(parts, vec![want.clone()], "{msg}"),
        // Without partition support the table itself still refuses the device.
        Refusal::Signature(s) => skip(&format!(
            "no partition scanning here ({msg}); table still refused: {}",
            s.name
        )),
        other => panic!("unexpected refusal {other:?}"),
    }
}

#[test]
fn mounted_device_is_refused_naming_the_mount_point() {
    let _g = lock();
    let dir = tempfile::tempdir().unwrap();
    let img = image(dir.path(), "mnt.img", 8 * MIB, &[]);
    if !mkfs_ext4(&img) {
        return skip("mkfs.ext4 is not available");
    }
    let lo = match LoopDev::attach(&img, false) {
        Ok(lo) => lo,
        Err(e) => return skip(&e),
    };
    let mnt = dir.path().join("mnt");
    fs::create_dir(&mnt).unwrap();
    let mnt = fs::canonicalize(&mnt).unwrap();
    let out = Command::new("mount")
        .arg(&lo.dev)
        .arg(&mnt)
        .output()
        .unwrap();
    if !out.status.success() {
        return skip(&format!(
            "mount failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let _m = Mounted { dir: mnt.clone() };
    let info = probe(&lo.dev).unwrap();
    let (r, msg) = refusal(check_block_device_writable(&info, true));
    assert_eq!(
        r,
        Refusal::Mounted {
            partition: None,
            mount_point: mnt.clone()
        }
    );
    assert_eq!(
        msg,
        format!(
            "{}: refusing to write: it is mounted on {}",
            lo.dev.display(),
            mnt.display()
        )
    );
    // And opening it for writing (O_EXCL) fails as well.
    assert!(open_target(&info, true, false).is_err());
}

#[test]
fn bad_file_targets_give_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();

    let p = d.join("x/y/file");
    let e = probe(&p).unwrap_err();
    assert!(matches!(e, DeviceError::ParentMissing { .. }), "{e}");
    assert_eq!(
        e.to_string(),
        format!(
            "{}: parent directory {} does not exist",
            p.display(),
            d.join("x/y").display()
        )
    );

    let e = probe(d).unwrap_err();
    assert_eq!(e.to_string(), format!("{}: is a directory", d.display()));

    // /dev/null and /dev/zero are targets of no size; other character devices are refused
    for p in ["/dev/null", "/dev/zero"] {
        let i = probe(Path::new(p)).unwrap();
        assert_eq!((i.kind, i.size, i.exists), (PathKind::CharDevice, 0, true));
        assert!(!i.direct_io_supported(), "{p}: O_DIRECT opens fail");
    }
    let e = probe(Path::new("/dev/urandom")).unwrap_err();
    assert_eq!(
        e.to_string(),
        "/dev/urandom: is not a regular file, a block device, /dev/null or /dev/zero (character device)"
    );
    assert!(!is_block_device("/dev/null"));

    // Kernel pseudo-filesystems are not storage, whether the file exists or not.
    for p in [
        "/proc/sysrq-trigger",
        "/proc/self/status",
        "/proc/ssdlab-new-file",
        "/sys/kernel/x",
    ] {
        let e = probe(Path::new(p)).unwrap_err();
        assert!(
            matches!(e, DeviceError::PseudoFilesystem { .. }),
            "{p}: {e}"
        );
    }
    let e = probe(Path::new("/proc/self/status")).unwrap_err();
    assert_eq!(
        e.to_string(),
        "/proc/self/status: is on procfs, a kernel pseudo-filesystem, not storage"
    );

    // A file used as a directory.
    fs::write(d.join("plain"), b"x").unwrap();
    let e = probe(&d.join("plain/sub")).unwrap_err();
    assert!(matches!(e, DeviceError::ParentNotDirectory { .. }), "{e}");

    // Dangling symlink.
    std::os::unix::fs::symlink(d.join("nowhere"), d.join("dangling")).unwrap();
    let e = probe(&d.join("dangling")).unwrap_err();
    assert!(matches!(e, DeviceError::DanglingSymlink { .. }), "{e}");

    // A symlink to a regular file is followed.
    std::os::unix::fs::symlink(d.join("plain"), d.join("link")).unwrap();
    let info = probe(&d.join("link")).unwrap();
    assert_eq!(
        (info.kind, info.exists, info.size),
        (PathKind::File, true, 1)
    );

    // A stale or forged TargetInfo cannot make prepare_file/open_target touch non-files.
    let forged = |path: &Path| TargetInfo {
        path: path.to_path_buf(),
        kind: PathKind::File,
        exists: true,
        size: 0,
        logical_block_size: 512,
        dio_mem_align: 512,
        dio_offset_align: 512,
        rotational: None,
        model: None,
        firmware: None,
        id: None,
    };
    let e = prepare_file(&forged(Path::new("/dev/null")), MIB).unwrap_err();
    assert_eq!(
        e.to_string(),
        "/dev/null: is a character device; only regular files are created or extended"
    );
    let e = open_target(&forged(Path::new("/dev/null")), true, false).unwrap_err();
    assert!(matches!(e, DeviceError::Changed { .. }), "{e}");
    let e = open_target(&forged(Path::new("/dev/urandom")), true, false).unwrap_err();
    assert!(matches!(e, DeviceError::NotRegularOrBlock { .. }), "{e}");
    let e = prepare_file(&forged(Path::new("/proc/self/status")), MIB).unwrap_err();
    assert!(matches!(e, DeviceError::PseudoFilesystem { .. }), "{e}");
    let e = open_target(&forged(Path::new("/proc/self/status")), true, false).unwrap_err();
    assert!(matches!(e, DeviceError::PseudoFilesystem { .. }), "{e}");
    let e = prepare_file(&forged(d), MIB).unwrap_err();
    assert!(matches!(e, DeviceError::IsDirectory { .. }), "{e}");
    let e = open_target(&forged(&d.join("missing")), false, false).unwrap_err();
    assert!(matches!(e, DeviceError::NotFound { .. }), "{e}");
    assert!(!d.join("missing").exists(), "open_target must never create");
}

#[test]
fn prepare_file_creates_extends_and_never_shrinks() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("target.dat");

    let info = probe(&p).unwrap();
    assert_eq!(
        (info.kind, info.exists, info.size),
        (PathKind::File, false, 0)
    );
    let first = 3 * MIB + 5;
    let info = prepare_file(&info, first).unwrap();
    assert!(info.exists);
    assert_eq!(info.size, first);
    let mode = fs::metadata(&p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode & 0o600, 0o600, "owner can read and write");
    assert_eq!(mode & 0o133, 0, "no exec, no group/other write: {mode:o}");
    let data = fs::read(&p).unwrap();
    assert!(data.iter().all(|&b| b != 0), "fill data must be non-zero");

    // A marker at the start and just before the old end must survive an extension.
    let f = fs::OpenOptions::new().write(true).open(&p).unwrap();
    f.write_all_at(b"MARKER-START", 0).unwrap();
    f.write_all_at(b"END", first - 3).unwrap();
    drop(f);
    let before = fs::read(&p).unwrap();
    let info = prepare_file(&info, 5 * MIB).unwrap();
    assert_eq!(info.size, 5 * MIB);
    let after = fs::read(&p).unwrap();
    assert_eq!(
        &after[..before.len()],
        &before[..],
        "existing bytes untouched"
    );
    assert!(after[before.len()..].iter().all(|&b| b != 0));
    assert_ne!(
        &after[before.len()..before.len() + 4096],
        &before[..4096],
        "new data differs from old"
    );

    // Never shrinks, never rewrites.
    let info = prepare_file(&info, MIB).unwrap();
    assert_eq!(info.size, 5 * MIB);
    assert_eq!(fs::read(&p).unwrap(), after);
    let info = prepare_file(&info, 5 * MIB).unwrap();
    assert_eq!(info.size, 5 * MIB);

    // A file created meanwhile by someone else (stale "missing" info) is not truncated.
    let q = dir.path().join("race.dat");
    let stale = probe(&q).unwrap();
    fs::write(&q, b"precious").unwrap();
    let info = prepare_file(&stale, 4).unwrap();
    assert_eq!(info.size, 8);
    assert_eq!(fs::read(&q).unwrap(), b"precious");
}

#[test]
fn direct_io_alignment_on_the_temp_filesystem() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("dio.dat");
    let info = prepare_file(&probe(&p).unwrap(), MIB).unwrap();
    eprintln!(
        "temp fs: dio_mem_align {} dio_offset_align {} logical_block_size {}",
        info.dio_mem_align, info.dio_offset_align, info.logical_block_size
    );
    if !info.direct_io_supported() {
        let e = open_target(&info, false, true).unwrap_err();
        assert!(matches!(e, DeviceError::DirectUnsupported { .. }), "{e}");
        return skip("the temp filesystem does not support O_DIRECT");
    }
    assert!(info.dio_offset_align >= 512 && info.dio_offset_align.is_power_of_two());
    assert!(info.dio_mem_align >= 1 && info.dio_mem_align.is_power_of_two());
    assert!(info.logical_block_size >= 512 && info.logical_block_size.is_power_of_two());
    let f = open_target(&info, true, true).unwrap();
    assert_eq!(f.metadata().unwrap().len(), MIB);
}

/// With SSDLAB_REQUIRE_PRIVILEGED_TESTS=1 (CI) a test that cannot run fails instead of skipping.
/// Motherboard-RAID members (Intel RST, DDF) attached as loop devices are refused — by blkid
/// where it is installed and by the built-in detector alone — and nothing is written.
#[test]
fn raid_member_loop_devices_are_refused() {
    let _g = lock();
    let dir = tempfile::tempdir().unwrap();
    let size = 40 * MIB;
    for (name, img, want) in [
        (
            "isw",
            common::isw(size),
            "it is a member of an Intel RST (isw) RAID set (isw_raid_member)",
        ),
        (
            "ddf",
            common::ddf(size),
            "it is a member of a SNIA DDF RAID set (ddf_raid_member)",
        ),
    ] {
        let path = img.write(dir.path(), &format!("{name}.img"));
        let before = fs::read(&path).unwrap();
        let lo = match LoopDev::attach(&path, false) {
            Ok(lo) => lo,
            Err(e) => return skip(&e),
        };
        let info = probe(&lo.dev).unwrap();
        let system = Blkid::system();
        if system.program().is_none() {
            skip("blkid is not installed");
        }
        for (judge, blkid) in [("blkid", system), ("built-in", Blkid::none())] {
            let (r, msg) = refusal(check_block_device_writable_with(&info, true, &blkid));
            assert!(
                matches!(r, Refusal::Signature(s) if s.class == SignatureClass::RaidMember),
                "{name} ({judge}): {msg}"
            );
            assert_eq!(
                msg,
                format!("{}: refusing to write: {want}", lo.dev.display()),
                "{name} ({judge})"
            );
        }
        let (_, msg) = refusal(check_block_device_writable(&info, true));
        assert!(msg.ends_with(want), "{msg}");
        drop(lo);
        assert_eq!(
            fs::read(&path).unwrap(),
            before,
            "{name}: the image is untouched"
        );
    }
}

/// A blank device is accepted; when blkid cannot answer, the note says the built-in detector
/// decided alone.
#[test]
fn blank_loop_device_without_blkid_gets_a_note() {
    let _g = lock();
    let dir = tempfile::tempdir().unwrap();
    let img = image(dir.path(), "blank-note.img", 8 * MIB, &[]);
    let lo = match LoopDev::attach(&img, false) {
        Ok(lo) => lo,
        Err(e) => return skip(&e),
    };
    let info = probe(&lo.dev).unwrap();
    let checked = check_block_device_writable_with(&info, true, &Blkid::none()).unwrap();
    assert_eq!(
        checked.notes,
        vec![format!(
            "{}: blkid is not installed; only the built-in signature detector looked for data on it",
            lo.dev.display()
        )]
    );
    if Blkid::system().program().is_some() {
        let checked = check_block_device_writable(&info, true).unwrap();
        assert!(checked.notes.is_empty(), "{:?}", checked.notes);
    }
}

/// A small tmpfs mounted for a test, unmounted on drop.
struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    fn mount(size: &str) -> Result<Tmpfs, String> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "ssdlab-test"])
            .arg(dir.path())
            .output()
            .map_err(|e| format!("cannot run mount: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "mount -t tmpfs failed (root needed): {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        Ok(Tmpfs { dir })
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}

/// ENOSPC while laying out (the space the plan saw is gone): a file this layout created is
/// removed, an extended file gets its original length and bytes back.
#[test]
fn a_full_filesystem_during_layout_is_given_back() {
    // Other tests here start programs (losetup, mount, blkid): a child forked while the layout
    // holds its file open keeps the unlinked file's space until it execs. Run alone.
    let _g = lock();
    let t = match Tmpfs::mount("8m") {
        Ok(t) => t,
        Err(e) => return skip(&e),
    };
    let d = t.dir.path();
    let p = d.join("new.img");
    let e = lay_out(&probe(&p).unwrap(), 32 * MIB, None).unwrap_err();
    match &e {
        LayoutError::Failed { err, cleanup, .. } => {
            assert_eq!(err.raw_os_error(), Some(libc_enospc()), "{e}");
            assert_eq!(*cleanup, ssdlab_target::Cleanup::Removed, "{e}");
        }
        other => panic!("expected a failed layout, got {other}"),
    }
    assert!(!e.nothing_written());
    assert!(!p.exists());
    wait_for_free_space(d, 6 * MIB);
    let q = d.join("old.img");
    let data: Vec<u8> = (0..MIB as u32).map(|i| (i % 241) as u8).collect();
    fs::write(&q, &data).unwrap();
    let e = lay_out(&probe(&q).unwrap(), 32 * MIB, None).unwrap_err();
    assert!(
        matches!(&e, LayoutError::Failed { cleanup: ssdlab_target::Cleanup::Truncated(n), .. } if *n == MIB),
        "{e}"
    );
    assert_eq!(fs::read(&q).unwrap(), data);
    // The space is free again.
    let st = rustix_statvfs(d);
    assert!(st > 6 * MIB, "{st}");
}

/// A raised stop flag interrupts a layout, which gives the file back.
#[test]
fn an_interrupted_layout_is_given_back() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("x.img");
    let stop = std::sync::atomic::AtomicBool::new(true);
    let e = lay_out(&probe(&p).unwrap(), 64 * MIB, Some(&stop)).unwrap_err();
    assert!(
        matches!(
            &e,
            LayoutError::Interrupted {
                cleanup: ssdlab_target::Cleanup::Removed,
                ..
            }
        ),
        "{e}"
    );
    assert!(!p.exists());
}

/// Waits (up to 5 s) until `d` has more than `bytes` free: a removed file's space comes back
/// when the last descriptor on it closes, which a process forked by another thread can delay.
fn wait_for_free_space(d: &Path, bytes: u64) {
    let t0 = std::time::Instant::now();
    while rustix_statvfs(d) <= bytes && t0.elapsed() < std::time::Duration::from_secs(5) {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

fn libc_enospc() -> i32 {
    28
}

/// Free bytes on the filesystem of `p`.
fn rustix_statvfs(p: &Path) -> u64 {
    let out = Command::new("stat")
        .args(["-f", "-c", "%a %S"])
        .arg(p)
        .output()
        .unwrap();
    let s = String::from_utf8_lossy(&out.stdout);
    let mut it = s.split_whitespace().map(|x| x.parse::<u64>().unwrap());
    it.next().unwrap() * it.next().unwrap()
}
