//! On-disk signatures (filesystems, partition tables, volumes, RAID members): a pure detector over
//! byte buffers, so it can be tested on synthetic images without root.
//!
//! [`detect_signature`] is the built-in detector. When util-linux's `blkid` is installed it is the
//! authority (see [`crate::blkid`]) and this detector runs as well; a device is refused when either
//! finds something. The formats, offsets and sanity checks follow libblkid's probers, so the names
//! of new formats are blkid's `TYPE` names (`isw_raid_member`, `ddf_raid_member`…). Formats that
//! were here before keep their short names (`ext4`, `LUKS`, `LVM2`, `md-1.2`, `zfs`, `GPT`…).
//!
//! Every check is bounded by the buffers it is given: a short head, a short tail or a size that
//! does not match them never panics, it only means fewer formats can be recognised.

/// How many bytes of the start of a device [`detect_signature`] wants: up to the last LUKS2
/// secondary header offset (4 MiB) plus a sector, which also covers VMFS (1 and 2 MiB).
pub const SIGNATURE_HEAD_LEN: usize = 4 * 1024 * 1024 + 4096;
/// How many bytes of the end of a device [`detect_signature`] wants: the RAID metadata of
/// motherboard RAIDs (Promise keeps it up to 3087 sectors before the end), md 0.90/1.0, DDF,
/// the ZFS labels 2 and 3, the GPT backup header, the nilfs2 backup superblock and DRBD metadata.
pub const SIGNATURE_TAIL_LEN: usize = 2 * 1024 * 1024;

// ---------------------------------------------------------------------------------------------
// Signatures (pure)
// ---------------------------------------------------------------------------------------------

/// What kind of data a [`Signature`] stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignatureClass {
    /// A filesystem (ext4, XFS, btrfs, vfat…).
    Filesystem,
    /// A partition table (GPT, MBR).
    PartitionTable,
    /// Another kind of volume: swap, LUKS, LVM2, bcache, ZFS, VDO…
    Volume,
    /// A member of a RAID set: Linux MD, Intel RST (isw), DDF, the other motherboard RAIDs.
    RaidMember,
}

/// An on-disk signature found by [`detect_signature`] (or reported by blkid).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Signature {
    /// Short name: "ext4", "xfs", "GPT", "swap", "LVM2", "isw_raid_member"…
    pub name: &'static str,
    /// Filesystem, partition table, RAID member or other volume.
    pub class: SignatureClass,
    /// For messages: "an ext4 filesystem", "a swap area", "a partition table (GPT)", "a member
    /// of an Intel RST (isw) RAID set"…
    pub description: &'static str,
}

pub(crate) const fn fs(name: &'static str, description: &'static str) -> Signature {
    Signature {
        name,
        class: SignatureClass::Filesystem,
        description,
    }
}

pub(crate) const fn vol(name: &'static str, description: &'static str) -> Signature {
    Signature {
        name,
        class: SignatureClass::Volume,
        description,
    }
}

pub(crate) const fn table(name: &'static str, description: &'static str) -> Signature {
    Signature {
        name,
        class: SignatureClass::PartitionTable,
        description,
    }
}

pub(crate) const fn raid(name: &'static str, description: &'static str) -> Signature {
    Signature {
        name,
        class: SignatureClass::RaidMember,
        description,
    }
}

// The formats added with the RAID-member work carry blkid's TYPE names.
const ISW: Signature = raid("isw_raid_member", "a member of an Intel RST (isw) RAID set");
const DDF: Signature = raid("ddf_raid_member", "a member of a SNIA DDF RAID set");
const LSI: Signature = raid("lsi_mega_raid_member", "a member of an LSI MegaRAID set");
const VIA: Signature = raid("via_raid_member", "a member of a VIA RAID set");
const SILICON: Signature = raid(
    "silicon_medley_raid_member",
    "a member of a Silicon Image Medley RAID set",
);
const NVIDIA: Signature = raid("nvidia_raid_member", "a member of an NVIDIA RAID set");
const PROMISE: Signature = raid(
    "promise_fasttrack_raid_member",
    "a member of a Promise FastTrack RAID set",
);
const HPT45X: Signature = raid("hpt45x_raid_member", "a member of a HighPoint 45x RAID set");
const HPT37X: Signature = raid("hpt37x_raid_member", "a member of a HighPoint 37x RAID set");
const ADAPTEC: Signature = raid("adaptec_raid_member", "a member of an Adaptec RAID set");
const JMICRON: Signature = raid("jmicron_raid_member", "a member of a JMicron RAID set");
const VMFS_VOLUME: Signature = raid("VMFS_volume_member", "a member of a VMware VMFS volume");
const MD_DESCRIPTION: &str = "a member of a Linux MD RAID array";

const BLUESTORE: Signature = vol("ceph_bluestore", "a Ceph BlueStore device");
const DRBD: Signature = vol("drbd", "DRBD replication metadata");
const DRBDMANAGE: Signature = vol("drbdmanage_control_volume", "a drbdmanage control volume");
const DRBDPROXY: Signature = vol("drbdproxy_datalog", "a DRBD Proxy data log");
const LVM1: Signature = vol("LVM1_member", "an LVM1 physical volume");
const SNAPSHOT_COW: Signature = vol(
    "DM_snapshot_cow",
    "a device-mapper snapshot copy-on-write store",
);
const VERITY: Signature = vol("DM_verity_hash", "a dm-verity hash device");
const INTEGRITY: Signature = vol("DM_integrity", "a dm-integrity device");
const LUKS: Signature = vol("LUKS", "a LUKS encrypted volume");
const VDO: Signature = vol("vdo", "a VDO volume");
const STRATIS: Signature = vol("stratis", "a Stratis pool member");
const BITLOCKER: Signature = vol("BitLocker", "a BitLocker encrypted volume");
const SWSUSPEND: Signature = vol("swsuspend", "a hibernation image (swsuspend)");
const ZFS: Signature = vol("zfs", "a ZFS pool member");

const REISERFS: Signature = fs("reiserfs", "a ReiserFS filesystem");
const REISER4: Signature = fs("reiser4", "a Reiser4 filesystem");
const JFS: Signature = fs("jfs", "a JFS filesystem");
const HFS: Signature = fs("hfs", "an HFS filesystem");
const HFSPLUS: Signature = fs("hfsplus", "an HFS+ filesystem");
const UFS: Signature = fs("ufs", "a UFS filesystem");
const NILFS2: Signature = fs("nilfs2", "a nilfs2 filesystem");
const OCFS: Signature = fs("ocfs", "an OCFS filesystem");
const OCFS2: Signature = fs("ocfs2", "an OCFS2 filesystem");
const ORACLEASM: Signature = fs("oracleasm", "an Oracle ASM disk");
const GFS: Signature = fs("gfs", "a GFS filesystem");
const GFS2: Signature = fs("gfs2", "a GFS2 filesystem");
const VMFS: Signature = fs("VMFS", "a VMware VMFS filesystem");
const ROMFS: Signature = fs("romfs", "a romfs filesystem");
const CRAMFS: Signature = fs("cramfs", "a cramfs filesystem");
const APFS: Signature = fs("apfs", "an APFS container");
const REFS: Signature = fs("ReFS", "a ReFS filesystem");
const EROFS: Signature = fs("erofs", "an EROFS filesystem");
const BFS: Signature = fs("bfs", "a BFS filesystem");
const NSS: Signature = fs("nss", "a Novell NSS volume");
const HPFS: Signature = fs("hpfs", "an HPFS filesystem");
const SQUASHFS3: Signature = fs("squashfs3", "a squashfs (version 3) filesystem");

/// What ssdlab calls each `TYPE` (superblocks) and `PTTYPE` (partition tables) that blkid can
/// report, for refusal messages. blkid's own name is the [`Signature::name`], except for the
/// partition tables `dos` and `gpt`/`PMBR`, which are shown as "MBR" and "GPT".
const BLKID_TYPES: &[Signature] = &[
    raid("linux_raid_member", MD_DESCRIPTION),
    DDF,
    ISW,
    LSI,
    VIA,
    SILICON,
    NVIDIA,
    PROMISE,
    HPT45X,
    HPT37X,
    ADAPTEC,
    JMICRON,
    VMFS_VOLUME,
    raid("stratis", "a member of a Stratis pool"),
    raid("drbd", "a DRBD replicated device"),
    raid("ubi", "a UBI volume"),
    vol("LVM2_member", "an LVM2 physical volume"),
    LVM1,
    vol("bcache", "a bcache device"),
    fs("bcachefs", "a bcachefs filesystem"),
    BLUESTORE,
    DRBDMANAGE,
    DRBDPROXY,
    SNAPSHOT_COW,
    VERITY,
    INTEGRITY,
    vol("crypto_LUKS", "a LUKS encrypted volume"),
    VDO,
    BITLOCKER,
    vol("cs_fvault2", "an Apple FileVault 2 (Core Storage) volume"),
    SWSUSPEND,
    vol("swap", "a swap area"),
    vol("xfs_external_log", "an XFS external log"),
    vol("jbd", "an ext3/ext4 external journal"),
    fs("vfat", "a FAT (vfat) filesystem"),
    fs("xfs", "an XFS filesystem"),
    fs("exfs", "an EXFS filesystem"),
    fs("ext4dev", "an ext4dev filesystem"),
    fs("ext4", "an ext4 filesystem"),
    fs("ext3", "an ext3 filesystem"),
    fs("ext2", "an ext2 filesystem"),
    REISERFS,
    REISER4,
    JFS,
    fs("udf", "a UDF filesystem"),
    fs("iso9660", "an ISO9660 filesystem"),
    fs("zfs_member", "a ZFS pool member"),
    HFSPLUS,
    HFS,
    UFS,
    HPFS,
    fs("sysv", "a System V filesystem"),
    fs("xenix", "a Xenix filesystem"),
    fs("ntfs", "an NTFS filesystem"),
    REFS,
    CRAMFS,
    ROMFS,
    fs("scoutfs_meta", "a scoutfs metadata device"),
    fs("scoutfs_data", "a scoutfs data device"),
    fs("minix", "a Minix filesystem"),
    GFS,
    GFS2,
    OCFS,
    OCFS2,
    ORACLEASM,
    fs("vxfs", "a VxFS filesystem"),
    fs("squashfs", "a squashfs filesystem"),
    SQUASHFS3,
    NSS,
    fs("btrfs", "a btrfs filesystem"),
    fs("ubifs", "a UBIFS filesystem"),
    BFS,
    VMFS,
    fs("befs", "a BeFS filesystem"),
    NILFS2,
    fs("exfat", "an exFAT filesystem"),
    fs("f2fs", "an f2fs filesystem"),
    fs("mpool", "an mpool device"),
    APFS,
    fs("zonefs", "a zonefs filesystem"),
    EROFS,
    // Partition tables (PTTYPE).
    table("MBR", "a partition table (MBR)"),
    table("GPT", "a partition table (GPT)"),
];

/// Partition table types blkid reports (`PTTYPE`) and the name ssdlab shows for them.
const BLKID_PTTYPES: &[(&str, &str)] = &[
    ("dos", "MBR"),
    ("gpt", "GPT"),
    ("PMBR", "GPT"), // a protective MBR: a GPT disk whose GPT header blkid did not accept
    ("mac", "mac"),
    ("bsd", "bsd"),
    ("sun", "sun"),
    ("sgi", "sgi"),
    ("solaris", "solaris"),
    ("unixware", "unixware"),
    ("minix", "minix"),
    ("atari", "atari"),
    ("aix", "aix"),
    ("ultrix", "ultrix"),
    ("dasd", "dasd"),
];

/// The [`Signature`] for a `TYPE` blkid reports (superblocks: filesystems, RAID members,
/// crypto, other volumes), or `None` for a type this table does not know (a newer blkid).
pub fn signature_for_blkid_type(type_name: &str) -> Option<Signature> {
    BLKID_TYPES
        .iter()
        .find(|s| s.name == type_name && s.class != SignatureClass::PartitionTable)
        .copied()
}

/// The [`Signature`] for a `PTTYPE` blkid reports, or `None` for one this table does not know.
pub fn signature_for_blkid_pttype(pttype: &str) -> Option<Signature> {
    let (_, shown) = BLKID_PTTYPES.iter().find(|(t, _)| *t == pttype)?;
    Some(match *shown {
        "MBR" => table("MBR", "a partition table (MBR)"),
        "GPT" => table("GPT", "a partition table (GPT)"),
        "mac" => table("mac", "a partition table (mac)"),
        "bsd" => table("bsd", "a partition table (bsd)"),
        "sun" => table("sun", "a partition table (sun)"),
        "sgi" => table("sgi", "a partition table (sgi)"),
        "solaris" => table("solaris", "a partition table (solaris)"),
        "unixware" => table("unixware", "a partition table (unixware)"),
        "minix" => table("minix", "a partition table (minix)"),
        "atari" => table("atari", "a partition table (atari)"),
        "aix" => table("aix", "a partition table (aix)"),
        "ultrix" => table("ultrix", "a partition table (ultrix)"),
        _ => table("dasd", "a partition table (dasd)"),
    })
}

// ---------------------------------------------------------------------------------------------
// Byte access
// ---------------------------------------------------------------------------------------------

fn bytes_at(buf: &[u8], off: usize, pat: &[u8]) -> bool {
    off.checked_add(pat.len())
        .and_then(|end| buf.get(off..end))
        .is_some_and(|b| b == pat)
}

fn arr<const N: usize>(buf: &[u8], off: usize) -> Option<[u8; N]> {
    buf.get(off..off.checked_add(N)?)?.try_into().ok()
}

fn le16(buf: &[u8], off: usize) -> Option<u16> {
    arr(buf, off).map(u16::from_le_bytes)
}

fn le32(buf: &[u8], off: usize) -> Option<u32> {
    arr(buf, off).map(u32::from_le_bytes)
}

fn le64(buf: &[u8], off: usize) -> Option<u64> {
    arr(buf, off).map(u64::from_le_bytes)
}

fn be16(buf: &[u8], off: usize) -> Option<u16> {
    arr(buf, off).map(u16::from_be_bytes)
}

fn be32(buf: &[u8], off: usize) -> Option<u32> {
    arr(buf, off).map(u32::from_be_bytes)
}

fn be64(buf: &[u8], off: usize) -> Option<u64> {
    arr(buf, off).map(u64::from_be_bytes)
}

/// The device as the detector sees it: the first bytes, the last bytes and the size.
struct Dev<'a> {
    head: &'a [u8],
    tail: &'a [u8],
    size: u64,
}

impl<'a> Dev<'a> {
    /// `len` bytes at device offset `off`, from the head or the tail buffer, if one holds them.
    fn at(&self, off: u64, len: usize) -> Option<&'a [u8]> {
        let end = off.checked_add(len as u64)?;
        if end <= self.head.len() as u64 {
            return self.head.get(off as usize..end as usize);
        }
        if end > self.size {
            return None;
        }
        let tail_start = self.size.checked_sub(self.tail.len() as u64)?;
        let o = usize::try_from(off.checked_sub(tail_start)?).ok()?;
        self.tail.get(o..o.checked_add(len)?)
    }

    fn is(&self, off: u64, pat: &[u8]) -> bool {
        self.at(off, pat.len()) == Some(pat)
    }

    /// Offset of the sector `n` sectors of `sector` bytes before the end (`n = 1`: the last
    /// one), counting whole sectors as blkid does; `None` when the device is smaller.
    fn back(&self, n: u64, sector: u64) -> Option<u64> {
        (self.size / sector).checked_sub(n).map(|s| s * sector)
    }
}

/// util-linux's `ul_crc32`: CRC-32 (IEEE, reflected), no inversion, given seed.
fn crc32_raw(seed: u32, data: &[u8]) -> u32 {
    let mut crc = seed;
    for &b in data {
        crc ^= b as u32;
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    crc
}

// ---------------------------------------------------------------------------------------------
// Formats that were here first
// ---------------------------------------------------------------------------------------------

const MD_MAGIC: u32 = 0xa92b_4efc;
const BCACHE_MAGIC: [u8; 16] = [
    0xc6, 0x85, 0x73, 0xf6, 0x4e, 0x1a, 0x45, 0xca, 0x82, 0x65, 0xf5, 0x7f, 0x48, 0xba, 0x6d, 0x81,
];
const ZFS_UBERBLOCK_MAGIC: u64 = 0x00ba_b10c;

/// ext2/3/4 superblock at 1024 (magic 0xEF53 at 1080), with sanity checks so random data does
/// not look like one; the variant is told apart by feature flags.
fn ext_signature(head: &[u8]) -> Option<Signature> {
    const SB: usize = 1024;
    if le16(head, SB + 56)? != 0xEF53 {
        return None;
    }
    let inodes = le32(head, SB)?;
    let log_block = le32(head, SB + 24)?;
    let rev = le32(head, SB + 76)?;
    if inodes == 0 || log_block > 6 || rev > 1 {
        return None;
    }
    let compat = le32(head, SB + 0x5C)?;
    let incompat = le32(head, SB + 0x60)?;
    let ro_compat = le32(head, SB + 0x64)?;
    // incompat: extents 0x40, 64bit 0x80, mmp 0x100, flex_bg 0x200, …; ro_compat: huge_file 0x8,
    // gdt_csum 0x10, dir_nlink 0x20, extra_isize 0x40, metadata_csum 0x400.
    if incompat & !0x1f != 0 || ro_compat & !0x7 != 0 {
        Some(fs("ext4", "an ext4 filesystem"))
    } else if compat & 0x4 != 0 || incompat & 0x8 != 0 {
        Some(fs("ext3", "an ext3 filesystem"))
    } else {
        Some(fs("ext2", "an ext2 filesystem"))
    }
}

/// A DOS/MBR partition table: 0x55AA at 510, every entry's status byte 0x00 or 0x80, and at least
/// one entry with a type and a length.
fn mbr_signature(head: &[u8]) -> Option<Signature> {
    if !bytes_at(head, 510, &[0x55, 0xAA]) {
        return None;
    }
    let mut used = false;
    for i in 0..4 {
        let e = 446 + 16 * i;
        let status = *head.get(e)?;
        if status != 0 && status != 0x80 {
            return None;
        }
        let ptype = *head.get(e + 4)?;
        let sectors = le32(head, e + 12)?;
        if ptype != 0 && sectors != 0 {
            used = true;
        }
    }
    used.then_some(table("MBR", "a partition table (MBR)"))
}

fn md_at(d: &Dev, off: u64, major: u32) -> bool {
    d.at(off, 8)
        .is_some_and(|b| le32(b, 0) == Some(MD_MAGIC) && le32(b, 4) == Some(major))
}

/// Linux MD: 0.90 (64 KiB-aligned, 64 KiB from the end), 1.0 (4 KiB-aligned, 8 KiB from the
/// end), 1.1 (at 0), 1.2 (at 4 KiB); the order is blkid's.
fn md(d: &Dev) -> Option<Signature> {
    if d.size >= 131072 && md_at(d, (d.size & !0xFFFF) - 0x10000, 0) {
        return Some(raid("md-0.90", MD_DESCRIPTION));
    }
    if d.size >= 16384 && md_at(d, (((d.size >> 9) - 16) << 9) & !4095, 1) {
        return Some(raid("md-1.0", MD_DESCRIPTION));
    }
    if md_at(d, 0, 1) {
        return Some(raid("md-1.1", MD_DESCRIPTION));
    }
    if md_at(d, 4096, 1) {
        return Some(raid("md-1.2", MD_DESCRIPTION));
    }
    None
}

/// The formats the first detector knew, in its order (minus md, LUKS and the partition tables,
/// which have their places in [`DETECTORS`]).
fn first_formats(d: &Dev) -> Option<Signature> {
    let head = d.head;
    if bytes_at(head, 0, b"XFSB") {
        return Some(fs("xfs", "an XFS filesystem"));
    }
    if bytes_at(head, 0, b"hsqs") {
        return Some(fs("squashfs", "a squashfs filesystem"));
    }
    if (0..4).any(|s| bytes_at(head, s * 512, b"LABELONE")) {
        return Some(vol("LVM2", "an LVM2 physical volume"));
    }
    if bytes_at(head, 4096 + 24, &BCACHE_MAGIC) {
        return Some(vol("bcache", "a bcache device"));
    }
    if bytes_at(head, 65536 + 64, b"_BHRfS_M") {
        return Some(fs("btrfs", "a btrfs filesystem"));
    }
    if let Some(sig) = ext_signature(head) {
        return Some(sig);
    }
    if le32(head, 1024) == Some(0xF2F5_2010) {
        return Some(fs("f2fs", "an f2fs filesystem"));
    }
    for page in [4096usize, 8192, 16384, 32768, 65536] {
        if bytes_at(head, page - 10, b"SWAPSPACE2") || bytes_at(head, page - 10, b"SWAP-SPACE") {
            return Some(vol("swap", "a swap area"));
        }
    }
    if bytes_at(head, 32769, b"CD001") {
        return Some(fs("iso9660", "an ISO9660 filesystem"));
    }
    if bytes_at(head, 3, b"NTFS    ") {
        return Some(fs("ntfs", "an NTFS filesystem"));
    }
    if bytes_at(head, 3, b"EXFAT   ") {
        return Some(fs("exfat", "an exFAT filesystem"));
    }
    if bytes_at(head, 510, &[0x55, 0xAA])
        && (bytes_at(head, 54, b"FAT12")
            || bytes_at(head, 54, b"FAT16")
            || bytes_at(head, 82, b"FAT32"))
    {
        return Some(fs("vfat", "a FAT (vfat) filesystem"));
    }
    None
}

fn gpt(d: &Dev) -> Option<Signature> {
    let found = d.is(512, b"EFI PART")
        || d.is(4096, b"EFI PART")
        || [512u64, 4096]
            .iter()
            .any(|&s| d.size >= s * 2 && d.is(d.size - s, b"EFI PART"));
    found.then_some(table("GPT", "a partition table (GPT)"))
}

fn mbr(d: &Dev) -> Option<Signature> {
    mbr_signature(d.head)
}

// ---------------------------------------------------------------------------------------------
// Motherboard / firmware RAID members (metadata at the end of the disk)
// ---------------------------------------------------------------------------------------------

/// Intel Matrix / RST (IMSM): "Intel Raid ISM Cfg Sig. " in the second-to-last sector (512-byte
/// or 4 KiB sectors).
fn isw(d: &Dev) -> Option<Signature> {
    if d.size < 0x10000 {
        return None;
    }
    [512u64, 4096]
        .iter()
        .filter_map(|&ss| d.back(2, ss))
        .any(|off| d.is(off, b"Intel Raid ISM Cfg Sig. "))
        .then_some(ISW)
}

/// SNIA DDF: the anchor header in the last sector (or 257 sectors before the end), big-endian
/// magic 0xDE11DE11, plus a valid CRC (blkid's or the spec's variant) or a "NN.NN.NN" revision.
fn ddf(d: &Dev) -> Option<Signature> {
    if d.size < 0x30000 {
        return None;
    }
    for back in [1u64, 257] {
        let Some(h) = d.back(back, 512).and_then(|off| d.at(off, 512)) else {
            continue;
        };
        if be32(h, 0) != Some(0xDE11_DE11) {
            continue;
        }
        let mut blanked = h.to_vec();
        blanked[4..8].fill(0xFF);
        let stored = be32(h, 4)?;
        let crc_ok = crc32_raw(0, &blanked) == stored || !crc32_raw(!0, &blanked) == stored;
        let rev = &h[32..40];
        let rev_ok = rev.iter().enumerate().all(|(i, &c)| {
            if i == 2 || i == 5 {
                c == b'.'
            } else {
                c.is_ascii_digit()
            }
        });
        if crc_ok || rev_ok {
            return Some(DDF);
        }
    }
    None
}

/// LSI MegaRAID (software RAID on LSI's BIOS): "$XIDE$" in the last sector.
fn lsi(d: &Dev) -> Option<Signature> {
    let off = d.back(1, 512).filter(|_| d.size >= 0x10000)?;
    d.is(off, b"$XIDE$").then_some(LSI)
}

/// VIA V-RAID: 0xAA55 (little-endian) at the start of the last sector, version ≤ 2, and an
/// 8-bit checksum of the first 50 bytes at byte 50.
fn via(d: &Dev) -> Option<Signature> {
    let off = d.back(1, 512).filter(|_| d.size >= 0x10000)?;
    let m = d.at(off, 51)?;
    let sum = m[..50].iter().fold(0u8, |a, &b| a.wrapping_add(b));
    (le16(m, 0)? == 0xAA55 && m[2] <= 2 && sum == m[50]).then_some(VIA)
}

/// Silicon Image Medley: magic 0x2F000000 at 0x60 of the last sector, disk number < 8, and the
/// 16-bit checksum at 0x13E.
fn silicon(d: &Dev) -> Option<Signature> {
    let off = d.back(1, 512).filter(|_| d.size >= 0x10000)?;
    let m = d.at(off, 512)?;
    if le32(m, 0x60)? != 0x2F00_0000 || m[0x116] >= 8 {
        return None;
    }
    let sum = (0..0x13E).step_by(2).fold(0u16, |a, i| {
        a.wrapping_add(u16::from_le_bytes([m[i], m[i + 1]]))
    });
    (sum.wrapping_neg() == le16(m, 0x13E)?).then_some(SILICON)
}

/// NVIDIA MediaShield: "NVIDIA  " in the second-to-last sector, a 120-byte header (30 words)
/// whose 32-bit words sum to zero.
fn nvidia(d: &Dev) -> Option<Signature> {
    let off = d.back(2, 512).filter(|_| d.size >= 0x10000)?;
    let m = d.at(off, 120)?;
    if &m[..8] != b"NVIDIA  " || le32(m, 8)? != 30 {
        return None;
    }
    let sum = (0..120)
        .step_by(4)
        .fold(0u32, |a, i| a.wrapping_add(le32(m, i).unwrap_or(0)));
    (sum == 0).then_some(NVIDIA)
}

/// Promise FastTrack: "Promise Technology, Inc." at one of the sector offsets from the end
/// that the Promise BIOSes use.
fn promise(d: &Dev) -> Option<Signature> {
    if d.size < 0x40000 {
        return None;
    }
    const BACK: [u64; 13] = [
        63, 255, 256, 16, 399, 591, 675, 735, 911, 974, 991, 951, 3087,
    ];
    BACK.iter()
        .map_while(|&s| d.back(s, 512))
        .any(|off| d.is(off, b"Promise Technology, Inc."))
        .then_some(PROMISE)
}

/// HighPoint 45x: magic 0x5a7816f3 (or 0x5a7816fd) 11 sectors before the end.
fn hpt45x(d: &Dev) -> Option<Signature> {
    let off = d.back(11, 512).filter(|_| d.size >= 0x10000)?;
    let m = le32(d.at(off, 4)?, 0)?;
    (m == 0x5a78_16f3 || m == 0x5a78_16fd).then_some(HPT45X)
}

/// HighPoint 37x: the same magic at byte 4640 (sector 9 + 32).
fn hpt37x(d: &Dev) -> Option<Signature> {
    (d.is(4640, b"\xf0\x16\x78\x5a") || d.is(4640, b"\xfd\x16\x78\x5a")).then_some(HPT37X)
}

/// Adaptec HostRAID: 0x37FC4D1E (big-endian) at the start of the last sector and "DPTM" at 256.
fn adaptec(d: &Dev) -> Option<Signature> {
    let off = d.back(1, 512).filter(|_| d.size >= 0x10000)?;
    (d.is(off, b"\x37\xfc\x4d\x1e") && d.is(off + 256, b"DPTM")).then_some(ADAPTEC)
}

/// JMicron: "JM" at the start of the last sector, the 16-bit words of the 128-byte header sum
/// to 0 or 1, RAID mode ≤ 5.
fn jmicron(d: &Dev) -> Option<Signature> {
    let off = d.back(1, 512).filter(|_| d.size >= 0x10000)?;
    let m = d.at(off, 128)?;
    if &m[..2] != b"JM" || m[0x30] > 5 {
        return None;
    }
    let sum = (0..128).step_by(2).fold(0u16, |a, i| {
        a.wrapping_add(u16::from_le_bytes([m[i], m[i + 1]]))
    });
    (sum <= 1).then_some(JMICRON)
}

// ---------------------------------------------------------------------------------------------
// Volumes
// ---------------------------------------------------------------------------------------------

/// LUKS: the primary header at 0, or a LUKS2 secondary header ("SKUL\xba\xbe", version 2, its
/// own offset recorded at byte 256) at one of the offsets cryptsetup uses.
fn luks(d: &Dev) -> Option<Signature> {
    if d.is(0, b"LUKS\xba\xbe") {
        return Some(LUKS);
    }
    const SECONDARY: [u64; 9] = [
        0x4000, 0x8000, 0x10000, 0x20000, 0x40000, 0x80000, 0x100000, 0x200000, 0x400000,
    ];
    SECONDARY
        .iter()
        .any(|&off| {
            d.at(off, 264).is_some_and(|h| {
                &h[..6] == b"SKUL\xba\xbe" && be16(h, 6) == Some(2) && be64(h, 256) == Some(off)
            })
        })
        .then_some(LUKS)
}

/// ZFS: an uberblock (magic 0x00bab10c, either byte order) in the uberblock ring (128–256 KiB
/// into a label) of label 0 or 1 at the start or label 2 or 3 at the end (256 KiB-aligned).
fn zfs(d: &Dev) -> Option<Signature> {
    const LABEL: u64 = 256 * 1024;
    let mut labels = vec![0, LABEL];
    let aligned = d.size - d.size % LABEL;
    if aligned >= 4 * LABEL {
        labels.extend([aligned - 2 * LABEL, aligned - LABEL]);
    }
    let hit = labels.iter().any(|&label| {
        (0..128u64).any(|i| {
            d.at(label + 128 * 1024 + i * 1024, 8).is_some_and(|b| {
                le64(b, 0) == Some(ZFS_UBERBLOCK_MAGIC) || be64(b, 0) == Some(ZFS_UBERBLOCK_MAGIC)
            })
        })
    });
    hit.then_some(ZFS)
}

fn volumes(d: &Dev) -> Option<Signature> {
    if d.is(0, b"bluestore block device") {
        return Some(BLUESTORE);
    }
    // DRBD 8.4 / 9 metadata in the last 4 KiB: magic at 60, 4096 bytes per bitmap bit at 80.
    if d.size >= 0x10000 {
        if let Some(m) = d.at(d.size - 4096, 84) {
            let magic = matches!(
                &m[60..64],
                b"\x83\x74\x02\x6b" | b"\x83\x74\x02\x6c" | b"\x83\x74\x02\x6d"
            );
            if magic && be32(m, 80) == Some(4096) {
                return Some(DRBD);
            }
        }
    }
    if d.size >= 64 * 1024 {
        if let Some(h) = d.at(0, 44) {
            if &h[..10] == b"$DRBDmgr=q"
                && h[11..43].iter().all(u8::is_ascii_hexdigit)
                && h[43] == b'\n'
            {
                return Some(DRBDMANAGE);
            }
        }
    }
    if d.size >= 16 * 1024 && d.is(0, b"DRBDdlh*") {
        return Some(DRBDPROXY);
    }
    if d.is(0, b"HM") && matches!(d.at(2, 2).and_then(|b| le16(b, 0)), Some(1 | 2)) {
        return Some(LVM1);
    }
    if d.is(0, b"SnAp") {
        return Some(SNAPSHOT_COW);
    }
    if d.is(0, b"verity\0\0") && d.at(8, 4).and_then(|b| le32(b, 0)) == Some(1) {
        return Some(VERITY);
    }
    if d.is(0, b"integrt\0") && d.at(8, 1).is_some_and(|v| v[0] != 0) {
        return Some(INTEGRITY);
    }
    if d.is(1024 * 1024, b"\x0d\xd0\x01\xc0") {
        return Some(VMFS_VOLUME);
    }
    if d.is(0, b"dmvdo001") {
        return Some(VDO);
    }
    const STRATIS_MAGIC: &[u8] = b"!Stra0tis\x86\xff\x02^\x41rh";
    if d.size >= 8192 && (d.is(512 + 4, STRATIS_MAGIC) || d.is(512 * 9 + 4, STRATIS_MAGIC)) {
        return Some(STRATIS);
    }
    // BitLocker (Vista, Windows 7 and later); "To Go" starts like a FAT32 boot sector and is
    // left to blkid, which follows its metadata pointer.
    if d.is(0, b"\xeb\x52\x90-FVE-FS-") || d.is(0, b"\xeb\x58\x90-FVE-FS-") {
        return Some(BITLOCKER);
    }
    // Hibernation images written to a swap area (TuxOnIce at 0, the others at a page end).
    if d.size >= 40960 {
        if d.is(0, b"\xed\xc3\x02\xe9\x98\x56\xe5\x0c") {
            return Some(SWSUSPEND);
        }
        for page in [0x1000u64, 0x2000, 0x4000, 0x8000, 0x10000] {
            let m = page - 10;
            if d.is(m, b"LINHIB0001")
                || [b"S1SUSPEND", b"S2SUSPEND", b"ULSUSPEND"]
                    .iter()
                    .any(|s| d.is(m, *s))
            {
                return Some(SWSUSPEND);
            }
        }
    }
    None
}

// ---------------------------------------------------------------------------------------------
// More filesystems
// ---------------------------------------------------------------------------------------------

fn reiser(d: &Dev) -> Option<Signature> {
    if d.size < 128 * 1024 {
        return None;
    }
    // (superblock offset, magic offset in it, magic)
    const MAGICS: [(u64, u64, &[u8]); 5] = [
        (8192, 0x34, b"ReIsErFs"),
        (65536, 0x34, b"ReIsEr2Fs"),
        (65536, 0x34, b"ReIsEr3Fs"),
        (65536, 0x34, b"ReIsErFs"),
        (8192, 20, b"ReIsErFs"),
    ];
    for (sb, moff, magic) in MAGICS {
        if !d.is(sb + moff, magic) {
            continue;
        }
        let Some(s) = d.at(sb, 46) else { continue };
        let blocksize = le16(s, 44)? as u64;
        let journal_block = le32(s, 12)? as u64;
        // At least 512-byte blocks, and not a copy inside the journal.
        if blocksize >> 9 != 0 && (sb / 1024) / (blocksize >> 9) <= journal_block / 2 {
            return Some(REISERFS);
        }
    }
    (d.size >= 128 * 1024 && d.is(65536, b"ReIsEr4")).then_some(REISER4)
}

/// JFS: "JFS1" at 32 KiB with consistent block size fields.
fn jfs(d: &Dev) -> Option<Signature> {
    if d.size < 16 * 1024 * 1024 || !d.is(32768, b"JFS1") {
        return None;
    }
    let s = d.at(32768, 32)?;
    let (bsize, l2bsize, l2bfactor) = (le32(s, 16)?, le16(s, 20)?, le16(s, 22)?);
    let (pbsize, l2pbsize) = (le32(s, 24)?, le16(s, 28)?);
    let ok = l2bsize <= 31
        && l2pbsize <= 31
        && bsize == 1u32 << l2bsize
        && pbsize == 1u32 << l2pbsize
        && l2bsize >= l2pbsize
        && l2bsize - l2pbsize == l2bfactor;
    ok.then_some(JFS)
}

/// HFS ("BD" at 1 KiB, allocation block size a multiple of 512) and HFS+ ("H+" version 4 or
/// "HX" version 5 at 1 KiB with a power-of-two block size, or embedded in an HFS wrapper).
fn hfs(d: &Dev) -> Option<Signature> {
    let s = d.at(1024, 128)?;
    let hfsplus_header = |h: &[u8]| -> bool {
        let version = be16(h, 2).unwrap_or(0);
        let bs = be32(h, 40).unwrap_or(0);
        ((&h[..2] == b"H+" && version == 4) || (&h[..2] == b"HX" && version == 5))
            && bs >= 512
            && bs.is_power_of_two()
    };
    if hfsplus_header(s) {
        return Some(HFSPLUS);
    }
    if &s[..2] != b"BD" {
        return None;
    }
    let al_blk_size = be32(s, 20)?;
    if al_blk_size == 0 || al_blk_size % 512 != 0 || s[36] > 27 {
        return None;
    }
    if &s[124..126] == b"H+" || &s[124..126] == b"HX" {
        return Some(HFSPLUS);
    }
    Some(HFS)
}

/// UFS / UFS2: one of the UFS magics (either byte order) at 1372 in a superblock at 0, 8, 64 or
/// 256 KiB.
fn ufs(d: &Dev) -> Option<Signature> {
    const MAGICS: [u32; 6] = [
        0x1954_0119,
        0x0001_1954,
        0x0019_5612,
        0x0009_5014,
        0x0061_2195,
        0x0523_1994,
    ];
    for kb in [0u64, 8, 64, 256] {
        if let Some(b) = d.at(kb * 1024 + 1372, 4) {
            let (l, m) = (le32(b, 0)?, be32(b, 0)?);
            if MAGICS.contains(&l) || MAGICS.contains(&m) {
                return Some(UFS);
            }
        }
    }
    None
}

/// nilfs2: magic 0x3434 with a valid CRC in the primary (1 KiB) or backup superblock (8
/// sectors before the end).
fn nilfs2(d: &Dev) -> Option<Signature> {
    if d.size < 1024 * 1024 {
        return None;
    }
    let valid = |off: u64| -> bool {
        let Some(sb) = d.at(off, 1024) else {
            return false;
        };
        if le16(sb, 6) != Some(0x3434) {
            return false;
        }
        let bytes = le16(sb, 8).unwrap_or(0) as usize;
        if !(20..=1024).contains(&bytes) {
            return false;
        }
        let seed = le32(sb, 12).unwrap_or(0);
        let crc = crc32_raw(seed, &sb[..16]);
        let crc = crc32_raw(crc, &[0; 4]);
        let crc = crc32_raw(crc, &sb[20..bytes]);
        crc == le32(sb, 16).unwrap_or(!crc)
    };
    (valid(1024) || d.back(8, 512).is_some_and(valid)).then_some(NILFS2)
}

fn other_filesystems(d: &Dev) -> Option<Signature> {
    // OCFS2 at 1, 2, 4 or 8 KiB; OCFS at 8 KiB; Oracle ASM at 32.
    if d.size >= 14000 * 1024 {
        if [1u64, 2, 4, 8].iter().any(|kb| d.is(kb * 1024, b"OCFSV2")) {
            return Some(OCFS2);
        }
        if d.is(8192, b"OracleCFS") {
            return Some(OCFS);
        }
    }
    if d.is(32, b"ORCLDISK") {
        return Some(ORACLEASM);
    }
    // GFS / GFS2: big-endian magic 0x01161970 at 64 KiB and the format numbers.
    if d.size >= 32 * 1024 * 1024 && d.is(65536, b"\x01\x16\x19\x70") {
        let s = d.at(65536, 32)?;
        let (fs_format, multi) = (be32(s, 24)?, be32(s, 28)?);
        if fs_format == 1309 && multi == 1401 {
            return Some(GFS);
        }
        if (1800..1900).contains(&fs_format) && (1900..2000).contains(&multi) {
            return Some(GFS2);
        }
    }
    if d.is(2 * 1024 * 1024, b"\x5e\xf1\xab\x2f") {
        return Some(VMFS);
    }
    if d.is(0, b"-rom1fs-") {
        return Some(ROMFS);
    }
    if d.is(0, b"\x45\x3d\xcd\x28") || d.is(0, b"\x28\xcd\x3d\x45") {
        return Some(CRAMFS);
    }
    if d.is(32, b"NXSB") {
        return Some(APFS);
    }
    if d.is(0, b"\0\0\0ReFS\0") {
        return Some(REFS);
    }
    if d.is(1024, b"\xe2\xe1\xf5\xe0") && d.at(1036, 1).is_some_and(|b| (9..=16).contains(&b[0])) {
        return Some(EROFS);
    }
    if d.is(0, b"\xce\xfa\xad\x1b") {
        return Some(BFS);
    }
    if d.is(4096, b"SPB5") {
        return Some(NSS);
    }
    if d.is(8192, b"\x49\xe8\x95\xf9") && d.is(8192 + 512, b"\x49\x18\x91\xf9") {
        return Some(HPFS);
    }
    if d.is(0, b"sqsh") {
        return Some(SQUASHFS3);
    }
    None
}

// ---------------------------------------------------------------------------------------------
// The detector
// ---------------------------------------------------------------------------------------------

type Detector = fn(&Dev) -> Option<Signature>;

/// In blkid's order: RAID members first (a member's data area may hold a filesystem), then
/// other volumes, filesystems, and partition tables last.
const DETECTORS: &[Detector] = &[
    md,
    ddf,
    isw,
    lsi,
    via,
    silicon,
    nvidia,
    promise,
    hpt45x,
    hpt37x,
    adaptec,
    jmicron,
    luks,
    volumes,
    first_formats,
    zfs,
    reiser,
    jfs,
    hfs,
    ufs,
    nilfs2,
    other_filesystems,
    gpt,
    mbr,
];

/// Looks for a filesystem, partition table, RAID member or volume signature.
///
/// `head` holds the first bytes of the device (ideally [`SIGNATURE_HEAD_LEN`]; shorter when the
/// device is smaller), `tail` the last bytes (ideally [`SIGNATURE_TAIL_LEN`]), and `size` is the
/// device size in bytes (`tail` ends at `size`). Returns the first signature found. Never
/// panics, whatever the buffers and the size.
pub fn detect_signature(head: &[u8], tail: &[u8], size: u64) -> Option<Signature> {
    let d = Dev { head, tail, size };
    DETECTORS.iter().find_map(|f| f(&d))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fill::XorShift;
    use proptest::prelude::*;

    fn img(len: usize) -> Vec<u8> {
        vec![0u8; len]
    }

    fn put(buf: &mut [u8], off: usize, pat: &[u8]) {
        buf[off..off + pat.len()].copy_from_slice(pat);
    }

    fn detect_head(head: &[u8]) -> Option<&'static str> {
        detect_signature(head, &[], head.len() as u64).map(|s| s.name)
    }

    fn ext_sb(incompat: u32, compat: u32) -> Vec<u8> {
        let mut b = img(SIGNATURE_HEAD_LEN);
        put(&mut b, 1024, &1000u32.to_le_bytes()); // inodes
        put(&mut b, 1024 + 24, &2u32.to_le_bytes()); // 4 KiB blocks
        put(&mut b, 1080, &0xEF53u16.to_le_bytes());
        put(&mut b, 1024 + 76, &1u32.to_le_bytes()); // dynamic rev
        put(&mut b, 1024 + 0x5C, &compat.to_le_bytes());
        put(&mut b, 1024 + 0x60, &incompat.to_le_bytes());
        b
    }

    #[test]
    fn blank_and_random_have_no_signature() {
        assert_eq!(detect_head(&img(SIGNATURE_HEAD_LEN)), None);
        let mut r = img(SIGNATURE_HEAD_LEN);
        XorShift(12345).fill(&mut r);
        assert_eq!(
            detect_signature(&r, &r[..SIGNATURE_TAIL_LEN], 1 << 30),
            None
        );
        assert_eq!(detect_signature(&[], &[], 0), None);
        assert_eq!(detect_head(&[0u8; 100]), None);
    }

    #[test]
    fn ext_variants() {
        assert_eq!(detect_head(&ext_sb(0x2c2, 0x4)), Some("ext4"));
        assert_eq!(detect_head(&ext_sb(0x2, 0x4)), Some("ext3"));
        assert_eq!(detect_head(&ext_sb(0x2, 0)), Some("ext2"));
        // Magic alone (random data) is not enough.
        let mut b = img(4096);
        put(&mut b, 1080, &0xEF53u16.to_le_bytes());
        assert_eq!(detect_head(&b), None);
    }

    #[test]
    fn simple_magics() {
        let cases: &[(usize, &[u8], &str)] = &[
            (0, b"XFSB", "xfs"),
            (0, b"LUKS\xba\xbe", "LUKS"),
            (0, b"hsqs", "squashfs"),
            (65600, b"_BHRfS_M", "btrfs"),
            (4086, b"SWAPSPACE2", "swap"),
            (4086, b"SWAP-SPACE", "swap"),
            (65526, b"SWAPSPACE2", "swap"),
            (3, b"NTFS    ", "ntfs"),
            (3, b"EXFAT   ", "exfat"),
            (512, b"LABELONE", "LVM2"),
            (1024, b"LABELONE", "LVM2"),
            (32769, b"CD001", "iso9660"),
            (1024, &0xF2F5_2010u32.to_le_bytes(), "f2fs"),
            (4096 + 24, &BCACHE_MAGIC, "bcache"),
            (512, b"EFI PART", "GPT"),
            (4096, b"EFI PART", "GPT"),
            (131072 + 5 * 1024, &ZFS_UBERBLOCK_MAGIC.to_le_bytes(), "zfs"),
        ];
        for (off, pat, name) in cases {
            let mut b = img(SIGNATURE_HEAD_LEN);
            put(&mut b, *off, pat);
            assert_eq!(detect_head(&b), Some(*name), "{name} at {off}");
        }
    }

    #[test]
    fn fat_needs_boot_signature() {
        let mut b = img(4096);
        put(&mut b, 54, b"FAT16   ");
        assert_eq!(detect_head(&b), None);
        put(&mut b, 510, &[0x55, 0xAA]);
        assert_eq!(detect_head(&b), Some("vfat"));
        let mut b = img(4096);
        put(&mut b, 82, b"FAT32   ");
        put(&mut b, 510, &[0x55, 0xAA]);
        assert_eq!(detect_head(&b), Some("vfat"));
    }

    #[test]
    fn mbr_needs_a_used_entry() {
        let mut b = img(4096);
        put(&mut b, 510, &[0x55, 0xAA]);
        assert_eq!(detect_head(&b), None, "empty table");
        put(&mut b, 446 + 16 + 4, &[0x83]);
        put(&mut b, 446 + 16 + 8, &2048u32.to_le_bytes());
        put(&mut b, 446 + 16 + 12, &4096u32.to_le_bytes());
        assert_eq!(detect_head(&b), Some("MBR"));
        b[446] = 0x17; // invalid status byte: boot code, not a table
        assert_eq!(detect_head(&b), None);
    }

    #[test]
    fn md_superblocks() {
        let mut md = Vec::new();
        md.extend_from_slice(&MD_MAGIC.to_le_bytes());
        md.extend_from_slice(&1u32.to_le_bytes());
        let mut b = img(SIGNATURE_HEAD_LEN);
        put(&mut b, 4096, &md);
        assert_eq!(detect_head(&b), Some("md-1.2"));
        let mut b = img(SIGNATURE_HEAD_LEN);
        put(&mut b, 0, &md);
        assert_eq!(detect_head(&b), Some("md-1.1"));

        // At the end: a 10 MiB + 3 KiB device.
        let size: u64 = 10 * 1024 * 1024 + 3072;
        let head = img(SIGNATURE_HEAD_LEN);
        let tail_start = size - SIGNATURE_TAIL_LEN as u64;
        let mut tail = img(SIGNATURE_TAIL_LEN);
        let off10 = ((((size >> 9) - 16) << 9) & !4095) - tail_start;
        put(&mut tail, off10 as usize, &md);
        assert_eq!(
            detect_signature(&head, &tail, size).map(|s| s.name),
            Some("md-1.0")
        );
        let mut tail = img(SIGNATURE_TAIL_LEN);
        let mut md090 = md.clone();
        md090[4..8].copy_from_slice(&0u32.to_le_bytes());
        let off090 = ((size & !0xFFFF) - 0x10000) - tail_start;
        put(&mut tail, off090 as usize, &md090);
        assert_eq!(
            detect_signature(&head, &tail, size).map(|s| s.name),
            Some("md-0.90")
        );
    }

    #[test]
    fn gpt_backup_header_at_end() {
        let size: u64 = 1 << 24;
        let mut tail = img(SIGNATURE_TAIL_LEN);
        put(&mut tail, SIGNATURE_TAIL_LEN - 512, b"EFI PART");
        let s = detect_signature(&img(SIGNATURE_HEAD_LEN), &tail, size).unwrap();
        assert_eq!((s.name, s.class), ("GPT", SignatureClass::PartitionTable));
    }

    /// Pseudo-random data (as ssdlab's own file layout writes it), all-0xFF and all-zero data,
    /// megabytes of it at several sizes: nothing is detected.
    #[test]
    fn random_ff_and_zero_data_have_no_signature() {
        for seed in [1u64, 12345, 0xDEAD_BEEF, 0x9E37_79B9_7F4A_7C15] {
            let mut head = img(SIGNATURE_HEAD_LEN);
            let mut tail = img(SIGNATURE_TAIL_LEN);
            XorShift(seed).fill(&mut head);
            XorShift(seed ^ 0x5555).fill(&mut tail);
            for size in [
                (SIGNATURE_HEAD_LEN + SIGNATURE_TAIL_LEN) as u64,
                64 << 20,
                (1 << 30) + 3 * 512,
                1 << 40,
            ] {
                assert_eq!(
                    detect_signature(&head, &tail, size),
                    None,
                    "seed {seed} size {size}"
                );
            }
        }
        for byte in [0x00u8, 0xFF] {
            let head = vec![byte; SIGNATURE_HEAD_LEN];
            let tail = vec![byte; SIGNATURE_TAIL_LEN];
            for size in [8u64 << 20, 1 << 30, (1 << 30) + 512 * 7] {
                assert_eq!(
                    detect_signature(&head, &tail, size),
                    None,
                    "{byte:#x} {size}"
                );
            }
            // A small device: head and tail are the whole device.
            let all = vec![byte; 300 * 1024];
            assert_eq!(detect_signature(&all, &all, all.len() as u64), None);
        }
    }

    #[test]
    fn blkid_type_table() {
        let s = signature_for_blkid_type("isw_raid_member").unwrap();
        assert_eq!(s.class, SignatureClass::RaidMember);
        assert_eq!(s.description, "a member of an Intel RST (isw) RAID set");
        assert_eq!(
            signature_for_blkid_type("ext4").unwrap().description,
            "an ext4 filesystem"
        );
        assert_eq!(signature_for_blkid_type("no_such_type"), None);
        assert_eq!(
            signature_for_blkid_type("GPT"),
            None,
            "tables come from PTTYPE"
        );
        assert_eq!(signature_for_blkid_pttype("dos").unwrap().name, "MBR");
        assert_eq!(signature_for_blkid_pttype("PMBR").unwrap().name, "GPT");
        assert_eq!(signature_for_blkid_pttype("sun").unwrap().name, "sun");
        assert_eq!(signature_for_blkid_pttype("zz"), None);
        // Every name `blkid -k` lists in util-linux 2.38–2.41 is known.
        for t in "linux_raid_member ddf_raid_member isw_raid_member lsi_mega_raid_member \
            via_raid_member silicon_medley_raid_member nvidia_raid_member \
            promise_fasttrack_raid_member hpt45x_raid_member hpt37x_raid_member \
            adaptec_raid_member jmicron_raid_member bcache bcachefs ceph_bluestore drbd \
            drbdmanage_control_volume drbdproxy_datalog LVM2_member LVM1_member DM_snapshot_cow \
            DM_verity_hash DM_integrity crypto_LUKS VMFS_volume_member ubi vdo stratis BitLocker \
            cs_fvault2 vfat swsuspend swap xfs xfs_external_log exfs ext4dev ext4 ext3 ext2 jbd \
            reiserfs reiser4 jfs udf iso9660 zfs_member hfsplus hfs ufs hpfs sysv xenix ntfs ReFS \
            cramfs romfs scoutfs_meta scoutfs_data minix gfs gfs2 ocfs ocfs2 oracleasm vxfs \
            squashfs squashfs3 nss btrfs ubifs bfs VMFS befs nilfs2 exfat f2fs mpool apfs zonefs \
            erofs"
            .split_whitespace()
        {
            assert!(signature_for_blkid_type(t).is_some(), "{t}");
        }
    }

    /// The formats with plain magics (no blkid-checked synthetic image in tests/signatures.rs).
    #[test]
    fn more_magics() {
        let size = 40u64 << 20;
        type Case<'a> = (&'a [(usize, &'a [u8])], &'a str);
        let cases: &[Case] = &[
            (&[(0, b"HM\x01\x00")], "LVM1_member"),
            (&[(4086, b"S1SUSPEND")], "swsuspend"),
            (&[(65526, b"LINHIB0001")], "swsuspend"),
            (
                &[
                    (0, b"$DRBDmgr=q"),
                    (10, b"0123456789abcdef0123456789abcdef0\n"),
                ],
                "drbdmanage_control_volume",
            ),
            (&[(65536, b"ReIsEr4")], "reiser4"),
            (&[(8192, b"OracleCFS")], "ocfs"),
            (&[(32, b"ORCLDISK")], "oracleasm"),
            (
                &[
                    (65536, b"\x01\x16\x19\x70"),
                    (65536 + 24, b"\x00\x00\x05\x1d\x00\x00\x05\x79"),
                ],
                "gfs",
            ),
            (&[(0, b"\x45\x3d\xcd\x28")], "cramfs"),
            (&[(32, b"NXSB")], "apfs"),
            (&[(0, b"\0\0\0ReFS\0")], "ReFS"),
            (&[(1024, b"\xe2\xe1\xf5\xe0"), (1036, &[12])], "erofs"),
            (&[(0, b"\xce\xfa\xad\x1b")], "bfs"),
            (&[(4096, b"SPB5")], "nss"),
            (
                &[(8192, b"\x49\xe8\x95\xf9"), (8704, b"\x49\x18\x91\xf9")],
                "hpfs",
            ),
            (&[(0, b"sqsh")], "squashfs3"),
            (
                &[(1024, b"H+\x00\x04"), (1024 + 40, &4096u32.to_be_bytes())],
                "hfsplus",
            ),
        ];
        for (patches, name) in cases {
            let mut b = img(SIGNATURE_HEAD_LEN);
            for (off, pat) in *patches {
                put(&mut b, *off, pat);
            }
            let got = detect_signature(&b, &[], size).map(|s| s.name);
            assert_eq!(got, Some(*name), "{name}");
        }
        // Sanity checks reject the bare magic.
        for (off, pat) in [
            (0usize, &b"HM\x07\x00"[..]),
            (1024, b"\xe2\xe1\xf5\xe0"),
            (1024, b"H+\x00\x09"),
        ] {
            let mut b = img(SIGNATURE_HEAD_LEN);
            put(&mut b, off, pat);
            assert_eq!(detect_signature(&b, &[], size), None, "{pat:?}");
        }
    }

    #[test]
    fn luks2_secondary_header() {
        let mut b = img(SIGNATURE_HEAD_LEN);
        put(&mut b, 0x4000, b"SKUL\xba\xbe\x00\x02");
        put(&mut b, 0x4000 + 256, &0x4000u64.to_be_bytes());
        assert_eq!(detect_head(&b), Some("LUKS"));
        // The recorded offset must match where the header is.
        put(&mut b, 0x4000 + 256, &0x8000u64.to_be_bytes());
        assert_eq!(detect_head(&b), None);
        let mut b = img(SIGNATURE_HEAD_LEN);
        put(&mut b, 0x400000, b"SKUL\xba\xbe\x00\x02");
        put(&mut b, 0x400000 + 256, &0x400000u64.to_be_bytes());
        assert_eq!(detect_head(&b), Some("LUKS"));
    }

    #[test]
    fn zfs_labels_at_the_end() {
        let size: u64 = (64 << 20) + 5 * 512; // not 256 KiB-aligned
        let aligned = size - size % (256 * 1024);
        let tail_start = size - SIGNATURE_TAIL_LEN as u64;
        for (label, bytes) in [
            (aligned - 512 * 1024, ZFS_UBERBLOCK_MAGIC.to_le_bytes()),
            (aligned - 256 * 1024, ZFS_UBERBLOCK_MAGIC.to_be_bytes()),
        ] {
            let mut tail = img(SIGNATURE_TAIL_LEN);
            let off = label + 128 * 1024 + 7 * 1024 - tail_start;
            put(&mut tail, off as usize, &bytes);
            let s = detect_signature(&img(SIGNATURE_HEAD_LEN), &tail, size).unwrap();
            assert_eq!(s.name, "zfs");
        }
    }

    #[test]
    fn raid_member_message_class() {
        let mut md = Vec::new();
        md.extend_from_slice(&MD_MAGIC.to_le_bytes());
        md.extend_from_slice(&1u32.to_le_bytes());
        let mut b = img(8192);
        put(&mut b, 4096, &md);
        let s = detect_signature(&b, &[], b.len() as u64).unwrap();
        assert_eq!(s.class, SignatureClass::RaidMember);
        assert_eq!(s.description, MD_DESCRIPTION);
    }

    /// Magic fragments the fuzzer plants so that the deeper checks (checksums, version
    /// fields, end-of-device offsets) run on garbage around them.
    const MAGICS: &[&[u8]] = &[
        b"Intel Raid ISM Cfg Sig. ",
        b"\xde\x11\xde\x11",
        b"$XIDE$",
        b"\x55\xaa",
        b"\x00\x00\x00\x2f",
        b"NVIDIA  \x1e\x00\x00\x00",
        b"Promise Technology, Inc.",
        b"\xf3\x16\x78\x5a",
        b"\x37\xfc\x4d\x1e",
        b"DPTM",
        b"JM",
        b"\xfc\x4e\x2b\xa9\x01\x00\x00\x00",
        b"\xfc\x4e\x2b\xa9\x00\x00\x00\x00",
        b"SKUL\xba\xbe\x00\x02",
        b"\x0c\xb1\xba\x00\x00\x00\x00\x00",
        b"\x83\x74\x02\x6b",
        b"$DRBDmgr=q",
        b"ReIsEr2Fs",
        b"JFS1",
        b"H+\x00\x04",
        b"BD",
        b"\x54\x19\x01\x00",
        b"\x34\x34",
        b"\x01\x16\x19\x70",
        b"EFI PART",
        b"LABELONE",
        b"\x53\xef",
    ];

    fn planted(len: usize, seed: u64, fill: u8, plants: &[(u64, usize)]) -> Vec<u8> {
        let mut b = match fill {
            0 => vec![0u8; len],
            1 => vec![0xFFu8; len],
            _ => {
                let mut b = vec![0u8; len];
                XorShift(seed | 1).fill(&mut b);
                b
            }
        };
        for &(at, m) in plants {
            let magic = MAGICS[m % MAGICS.len()];
            if len >= magic.len() {
                let off = (at % (len - magic.len() + 1) as u64) as usize;
                // Land on interesting offsets: sector starts and a few fixed places.
                let off = match at % 4 {
                    0 => off & !511,
                    1 => (len - magic.len()) - ((len - magic.len()) - off) / 512 * 512,
                    _ => off,
                };
                b[off..off + magic.len()].copy_from_slice(magic);
            }
        }
        b
    }

    fn sizes() -> impl Strategy<Value = u64> {
        prop_oneof![
            Just(0u64),
            0u64..4096,
            0u64..(16 << 20),
            Just(u64::MAX),
            Just(u64::MAX - 511),
            any::<u64>(),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

        /// Any bytes, any lengths, any size (smaller than the buffers, 0, huge): no panic.
        #[test]
        fn detector_never_panics(
            head_len in prop_oneof![0usize..2048, 0usize..=SIGNATURE_HEAD_LEN],
            tail_len in prop_oneof![0usize..2048, 0usize..=SIGNATURE_TAIL_LEN],
            size in sizes(),
            size_from_buffers in any::<bool>(),
            seed in any::<u64>(),
            fill in 0u8..3,
            head_plants in proptest::collection::vec((any::<u64>(), any::<usize>()), 0..6),
            tail_plants in proptest::collection::vec((any::<u64>(), any::<usize>()), 0..6),
        ) {
            let head = planted(head_len, seed, fill, &head_plants);
            let tail = planted(tail_len, seed.rotate_left(7), fill, &tail_plants);
            let size = if size_from_buffers { (head_len + tail_len) as u64 } else { size };
            let _ = detect_signature(&head, &tail, size);
            let _ = detect_signature(&head, &head, head_len as u64);
            let _ = detect_signature(&tail, &tail, size);
        }

        /// Arbitrary small buffers straight from proptest.
        #[test]
        fn detector_never_panics_on_arbitrary_bytes(
            head in proptest::collection::vec(any::<u8>(), 0..1200),
            tail in proptest::collection::vec(any::<u8>(), 0..1200),
            size in sizes(),
        ) {
            let _ = detect_signature(&head, &tail, size);
        }
    }
}
