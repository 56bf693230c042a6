//! Synthetic disk images with on-disk signatures (RAID members, volumes, filesystems) built from
//! the formats' published layouts: the magic bytes, checksums and fields that libblkid's probers
//! and ssdlab's built-in detector check, at the right offsets. Everything else is zero (the image
//! files are sparse).

#![allow(dead_code)]

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use ssdlab_target::{SIGNATURE_HEAD_LEN, SIGNATURE_TAIL_LEN};

pub const MIB: u64 = 1 << 20;

/// A sparse image: its size and the bytes written into it.
#[derive(Debug, Clone)]
pub struct Image {
    pub size: u64,
    pub patches: Vec<(u64, Vec<u8>)>,
}

impl Image {
    pub fn new(size: u64) -> Image {
        Image {
            size,
            patches: Vec::new(),
        }
    }

    pub fn put(mut self, off: u64, bytes: &[u8]) -> Image {
        assert!(off + bytes.len() as u64 <= self.size, "patch past the end");
        self.patches.push((off, bytes.to_vec()));
        self
    }

    /// The image bytes `[start, start + len)`.
    pub fn read(&self, start: u64, len: usize) -> Vec<u8> {
        let mut buf = vec![0u8; len];
        let end = start + len as u64;
        for (off, bytes) in &self.patches {
            let (a, b) = (*off, *off + bytes.len() as u64);
            let (lo, hi) = (a.max(start), b.min(end));
            if lo < hi {
                buf[(lo - start) as usize..(hi - start) as usize]
                    .copy_from_slice(&bytes[(lo - a) as usize..(hi - a) as usize]);
            }
        }
        buf
    }

    /// What the safety check reads: the first [`SIGNATURE_HEAD_LEN`] bytes…
    pub fn head(&self) -> Vec<u8> {
        self.read(0, self.size.min(SIGNATURE_HEAD_LEN as u64) as usize)
    }

    /// …and the last [`SIGNATURE_TAIL_LEN`] bytes.
    pub fn tail(&self) -> Vec<u8> {
        let len = self.size.min(SIGNATURE_TAIL_LEN as u64);
        self.read(self.size - len, len as usize)
    }

    /// Writes the image as a sparse file.
    pub fn write(&self, dir: &Path, name: &str) -> PathBuf {
        let p = dir.join(name);
        let f = File::create(&p).unwrap();
        f.set_len(self.size).unwrap();
        for (off, bytes) in &self.patches {
            f.write_all_at(bytes, *off).unwrap();
        }
        f.sync_all().unwrap();
        p
    }
}

/// A 512-byte sector with `fields` written at their offsets.
fn sector(fields: &[(usize, &[u8])]) -> Vec<u8> {
    let mut s = vec![0u8; 512];
    for (off, b) in fields {
        s[*off..*off + b.len()].copy_from_slice(b);
    }
    s
}

/// util-linux's `ul_crc32`: CRC-32 (IEEE, reflected), no inversion.
pub fn crc32_raw(seed: u32, data: &[u8]) -> u32 {
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

/// CRC-32C (Castagnoli) as Stratis uses it.
fn crc32c(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc ^= b as u32;
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0x82F6_3B78
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// LVM2's label CRC (a nibble-wise CRC-32 with LVM's initial value).
fn lvm2_crc(data: &[u8]) -> u32 {
    const TAB: [u32; 16] = [
        0x00000000, 0x1db71064, 0x3b6e20c8, 0x26d930ac, 0x76dc4190, 0x6b6b51f4, 0x4db26158,
        0x5005713c, 0xedb88320, 0xf00f9344, 0xd6d6a3e8, 0xcb61b38c, 0x9b64c2b0, 0x86d3d2d4,
        0xa00ae278, 0xbdbdf21c,
    ];
    let mut crc = 0xf597a6cfu32;
    for &b in data {
        crc ^= b as u32;
        crc = (crc >> 4) ^ TAB[(crc & 0xf) as usize];
        crc = (crc >> 4) ^ TAB[(crc & 0xf) as usize];
    }
    crc
}

fn last_sector(size: u64, n: u64) -> u64 {
    (size / 512 - n) * 512
}

// ---------------------------------------------------------------------------------------------
// RAID members
// ---------------------------------------------------------------------------------------------

/// Intel Matrix / RST (IMSM): the MPB signature and version in the second-to-last sector.
pub fn isw(size: u64) -> Image {
    let s = sector(&[(0, b"Intel Raid ISM Cfg Sig. 1.3.00")]);
    Image::new(size).put(last_sector(size, 2), &s)
}

/// SNIA DDF: anchor header in the last sector (magic, CRC, GUID, revision; primary header LBA 0
/// so no second header is needed).
pub fn ddf(size: u64) -> Image {
    let mut h = vec![0xFFu8; 512];
    h[0..4].copy_from_slice(&0xDE11_DE11u32.to_be_bytes());
    h[8..32].copy_from_slice(b"ssdlab-test-ddf-guid-000");
    h[32..40].copy_from_slice(b"01.02.00");
    h[40..44].copy_from_slice(&1u32.to_be_bytes());
    h[96..104].copy_from_slice(&0u64.to_be_bytes()); // primary_lba
    h[104..112].copy_from_slice(&0u64.to_be_bytes()); // secondary_lba
    h[112] = 0x00; // anchor
                   // CRC with the CRC field read as 0xFF bytes (as libblkid checks it).
    let crc = crc32_raw(0, &h);
    h[4..8].copy_from_slice(&crc.to_be_bytes());
    Image::new(size).put(last_sector(size, 1), &h)
}

/// LSI MegaRAID: "$XIDE$" at the start of the last sector.
pub fn lsi(size: u64) -> Image {
    Image::new(size).put(last_sector(size, 1), &sector(&[(0, b"$XIDE$")]))
}

/// VIA V-RAID: signature 0xAA55, version 1, checksum of bytes 0..50 at 50.
pub fn via(size: u64) -> Image {
    let mut s = sector(&[(0, &0xAA55u16.to_le_bytes()), (2, &[1]), (3, &[1, 0, 0])]);
    s[50] = s[..50].iter().fold(0u8, |a, &b| a.wrapping_add(b));
    Image::new(size).put(last_sector(size, 1), &s)
}

/// Silicon Image Medley: magic 0x2F000000 at 0x60, version 2.0, disk 0, 16-bit checksum.
pub fn silicon(size: u64) -> Image {
    let mut s = sector(&[
        (0x60, &0x2F00_0000u32.to_le_bytes()),
        (0x10A, &0u16.to_le_bytes()),
        (0x10C, &2u16.to_le_bytes()),
    ]);
    let sum = (0..0x13E).step_by(2).fold(0u16, |a, i| {
        a.wrapping_add(u16::from_le_bytes([s[i], s[i + 1]]))
    });
    s[0x13E..0x140].copy_from_slice(&sum.wrapping_neg().to_le_bytes());
    Image::new(size).put(last_sector(size, 1), &s)
}

/// NVIDIA MediaShield: "NVIDIA  ", 30 words, words summing to zero, in the second-to-last sector.
pub fn nvidia(size: u64) -> Image {
    let mut s = sector(&[
        (0, b"NVIDIA  "),
        (8, &30u32.to_le_bytes()),
        (16, &100u16.to_le_bytes()),
    ]);
    let sum = (0..120).step_by(4).fold(0u32, |a, i| {
        a.wrapping_add(u32::from_le_bytes(s[i..i + 4].try_into().unwrap()))
    });
    s[12..16].copy_from_slice(&sum.wrapping_neg().to_le_bytes());
    Image::new(size).put(last_sector(size, 2), &s)
}

/// Promise FastTrack: the signature 63 sectors before the end.
pub fn promise(size: u64) -> Image {
    let s = sector(&[(0, b"Promise Technology, Inc.")]);
    Image::new(size).put((size / 512 - 63) * 512, &s)
}

/// HighPoint 45x: magic 11 sectors before the end.
pub fn hpt45x(size: u64) -> Image {
    let s = sector(&[(0, &0x5a78_16f3u32.to_le_bytes())]);
    Image::new(size).put(last_sector(size, 11), &s)
}

/// HighPoint 37x: magic at byte 4640 (sector 9, offset 32).
pub fn hpt37x(size: u64) -> Image {
    Image::new(size).put(4640, &0x5a78_16f0u32.to_le_bytes())
}

/// Adaptec HostRAID: 0x37FC4D1E (big-endian) at 0 and "DPTM" at 256 of the last sector.
pub fn adaptec(size: u64) -> Image {
    let s = sector(&[
        (0, &0x37FC_4D1Eu32.to_be_bytes()),
        (63, &[1]),
        (256, b"DPTM"),
    ]);
    Image::new(size).put(last_sector(size, 1), &s)
}

/// JMicron: "JM", version 1.0, RAID 0, 16-bit words of the 128-byte header summing to zero.
pub fn jmicron(size: u64) -> Image {
    let mut s = sector(&[
        (0, b"JM"),
        (2, &0x0100u16.to_le_bytes()),
        (0x10, &0x1234_5678u32.to_le_bytes()),
        (0x20, b"ssdlab-test\0\0\0\0\0"),
        (0x31, &[2]),
    ]);
    let sum = (0..128).step_by(2).fold(0u16, |a, i| {
        a.wrapping_add(u16::from_le_bytes([s[i], s[i + 1]]))
    });
    s[4..6].copy_from_slice(&sum.wrapping_neg().to_le_bytes());
    Image::new(size).put(last_sector(size, 1), &s)
}

/// Linux MD metadata 1.2: the superblock at 4 KiB with its offset and checksum.
pub fn md12(size: u64) -> Image {
    let mut sb = vec![0u8; 256];
    sb[0..4].copy_from_slice(&0xa92b_4efcu32.to_le_bytes());
    sb[4..8].copy_from_slice(&1u32.to_le_bytes());
    sb[16..32].copy_from_slice(b"ssdlab-set-uuid!");
    sb[32..38].copy_from_slice(b"test:0");
    sb[72..76].copy_from_slice(&0u32.to_le_bytes()); // raid0
    sb[92..96].copy_from_slice(&2u32.to_le_bytes()); // raid_disks
    sb[128..136].copy_from_slice(&2048u64.to_le_bytes()); // data_offset
    sb[144..152].copy_from_slice(&8u64.to_le_bytes()); // super_offset (sectors)
    sb[168..184].copy_from_slice(b"ssdlab-dev-uuid!");
    let mut csum: u64 = 0;
    for i in (0..256).step_by(4) {
        if i != 216 {
            csum += u32::from_le_bytes(sb[i..i + 4].try_into().unwrap()) as u64;
        }
    }
    let csum = ((csum >> 32) + (csum & 0xffff_ffff)) as u32;
    sb[216..220].copy_from_slice(&csum.to_le_bytes());
    Image::new(size).put(4096, &sb)
}

// ---------------------------------------------------------------------------------------------
// Volumes
// ---------------------------------------------------------------------------------------------

pub fn luks1(size: u64) -> Image {
    let mut h = vec![0u8; 592];
    h[..6].copy_from_slice(b"LUKS\xba\xbe");
    h[6..8].copy_from_slice(&1u16.to_be_bytes());
    h[8..11].copy_from_slice(b"aes");
    h[168..172].copy_from_slice(b"1234");
    Image::new(size).put(0, &h)
}

/// A LUKS2 header: primary at 0 and, with `primary == false`, only the secondary at 16 KiB.
pub fn luks2(size: u64, primary: bool) -> Image {
    let (off, magic): (u64, &[u8]) = if primary {
        (0, b"LUKS\xba\xbe")
    } else {
        (0x4000, b"SKUL\xba\xbe")
    };
    let mut h = vec![0u8; 512];
    h[..6].copy_from_slice(magic);
    h[6..8].copy_from_slice(&2u16.to_be_bytes());
    h[8..16].copy_from_slice(&0x4000u64.to_be_bytes());
    h[72..78].copy_from_slice(b"sha256");
    h[256..264].copy_from_slice(&off.to_be_bytes());
    Image::new(size).put(off, &h)
}

/// An LVM2 physical volume label in sector 1.
pub fn lvm2(size: u64) -> Image {
    let mut s = sector(&[
        (0, b"LABELONE"),
        (8, &1u64.to_le_bytes()),
        (20, &32u32.to_le_bytes()),
        (24, b"LVM2 001"),
        (32, b"ssdlabTESTuuid0123456789abcdefgh"),
    ]);
    let crc = lvm2_crc(&s[20..]);
    s[16..20].copy_from_slice(&crc.to_le_bytes());
    Image::new(size).put(512, &s)
}

pub fn bluestore(size: u64) -> Image {
    Image::new(size).put(0, b"bluestore block device\n")
}

pub fn vdo(size: u64) -> Image {
    Image::new(size).put(0, b"dmvdo001")
}

/// A Stratis superblock (first copy) with its CRC-32C.
pub fn stratis(size: u64) -> Image {
    let mut s = sector(&[
        (4, b"!Stra0tis\x86\xff\x02^\x41rh"),
        (20, &(size / 512).to_le_bytes()),
        (32, b"0123456789abcdef0123456789abcdef"),
        (64, b"fedcba9876543210fedcba9876543210"),
    ]);
    let crc = crc32c(&s[4..]);
    s[..4].copy_from_slice(&crc.to_le_bytes());
    Image::new(size).put(512, &s)
}

/// DRBD 8.4 metadata in the last 4 KiB.
pub fn drbd(size: u64) -> Image {
    let s = sector(&[
        (40, &0x1122_3344_5566_7788u64.to_be_bytes()),
        (60, b"\x83\x74\x02\x6b"),
        (80, &4096u32.to_be_bytes()),
    ]);
    Image::new(size).put(size - 4096, &s)
}

pub fn drbdproxy(size: u64) -> Image {
    Image::new(size).put(0, b"DRBDdlh*\x01\0\0\0\0\0\0\0")
}

pub fn snapshot_cow(size: u64) -> Image {
    Image::new(size).put(0, b"SnAp\x01\0\0\0\x01\0\0\0\x08\0\0\0")
}

pub fn verity(size: u64) -> Image {
    let s = sector(&[
        (0, b"verity\0\0"),
        (8, &1u32.to_le_bytes()),
        (12, &1u32.to_le_bytes()),
        (32, b"sha256"),
        (64, &4096u32.to_le_bytes()),
        (68, &4096u32.to_le_bytes()),
    ]);
    Image::new(size).put(0, &s)
}

pub fn integrity(size: u64) -> Image {
    Image::new(size).put(0, b"integrt\0\x01\x03\x04\0")
}

pub fn vmfs_volume(size: u64) -> Image {
    Image::new(size).put(MIB, b"\x0d\xd0\x01\xc0\x0e\0\0\0")
}

pub fn vmfs(size: u64) -> Image {
    Image::new(size).put(2 * MIB, b"\x5e\xf1\xab\x2f\x05\0\0\0\x05")
}

/// BitLocker (Vista boot sector signature).
pub fn bitlocker(size: u64) -> Image {
    Image::new(size).put(0, b"\xeb\x52\x90-FVE-FS-")
}

/// A ZFS uberblock in the ring of label 2 (near the end), as the built-in detector checks it.
pub fn zfs_end_label(size: u64) -> Image {
    let label = 256 * 1024;
    let aligned = size - size % label;
    Image::new(size).put(
        aligned - 2 * label + 128 * 1024 + 3 * 1024,
        &0x00ba_b10cu64.to_le_bytes(),
    )
}

// ---------------------------------------------------------------------------------------------
// Filesystems
// ---------------------------------------------------------------------------------------------

pub fn reiserfs(size: u64) -> Image {
    let s = sector(&[
        (0, &((size / 4096) as u32).to_le_bytes()),
        (12, &18u32.to_le_bytes()), // journal block
        (44, &4096u16.to_le_bytes()),
        (52, b"ReIsEr2Fs"),
    ]);
    Image::new(size).put(65536, &s)
}

pub fn jfs(size: u64) -> Image {
    let s = sector(&[
        (0, b"JFS1"),
        (4, &1u32.to_le_bytes()),
        (8, &(size / 512).to_le_bytes()),
        (16, &4096u32.to_le_bytes()),
        (20, &12u16.to_le_bytes()),
        (22, &3u16.to_le_bytes()),
        (24, &512u32.to_le_bytes()),
        (28, &9u16.to_le_bytes()),
    ]);
    Image::new(size).put(32768, &s)
}

pub fn gfs2(size: u64) -> Image {
    let s = sector(&[
        (0, &0x0116_1970u32.to_be_bytes()),
        (4, &1u32.to_be_bytes()),
        (16, &100u32.to_be_bytes()),
        (24, &1801u32.to_be_bytes()),
        (28, &1900u32.to_be_bytes()),
        (36, &4096u32.to_be_bytes()),
        (40, &12u32.to_be_bytes()),
    ]);
    Image::new(size).put(65536, &s)
}

pub fn ocfs2(size: u64) -> Image {
    Image::new(size).put(2048, b"OCFSV2")
}

/// HFS: "BD" at 1 KiB with a sane allocation block size, not a wrapper around HFS+.
pub fn hfs(size: u64) -> Image {
    let s = sector(&[
        (0, b"BD"),
        (18, &1000u16.to_be_bytes()),
        (20, &4096u32.to_be_bytes()),
        (28, &16u16.to_be_bytes()),
        (36, &[4]),
        (37, b"test"),
    ]);
    Image::new(size).put(1024, &s)
}

/// HFS+: "H+" version 4 with a 4 KiB block size (built-in detector only: blkid reads the
/// catalog B-tree as well).
pub fn hfsplus(size: u64) -> Image {
    let s = sector(&[
        (0, b"H+"),
        (2, &4u16.to_be_bytes()),
        (40, &4096u32.to_be_bytes()),
    ]);
    Image::new(size).put(1024, &s)
}

/// UFS1: the magic at 1372 in the superblock at 8 KiB.
pub fn ufs(size: u64) -> Image {
    Image::new(size).put(8192 + 1372, &0x0001_1954u32.to_le_bytes())
}

/// nilfs2: the primary superblock with its CRC.
pub fn nilfs2(size: u64) -> Image {
    let mut sb = vec![0u8; 1024];
    sb[0..4].copy_from_slice(&2u32.to_le_bytes()); // rev level
    sb[6..8].copy_from_slice(&0x3434u16.to_le_bytes());
    sb[8..10].copy_from_slice(&1024u16.to_le_bytes()); // s_bytes
    sb[12..16].copy_from_slice(&0x1234_5678u32.to_le_bytes()); // crc seed
    sb[24..32].copy_from_slice(&1u64.to_le_bytes());
    sb[0x28..0x30].copy_from_slice(&size.to_le_bytes());
    let crc = crc32_raw(0x1234_5678, &sb[..16]);
    let crc = crc32_raw(crc, &[0; 4]);
    let crc = crc32_raw(crc, &sb[20..1024]);
    sb[16..20].copy_from_slice(&crc.to_le_bytes());
    Image::new(size).put(1024, &sb)
}

pub fn romfs(size: u64) -> Image {
    Image::new(size).put(0, b"-rom1fs-\0\0\x10\0\0\0\0\0ssdlab\0\0")
}

/// One synthetic image per format: (what blkid must report as TYPE or PTTYPE — `None` where
/// only the built-in detector is checked —, the built-in detector's name, the image).
pub fn all(size: u64) -> Vec<(Option<&'static str>, &'static str, Image)> {
    vec![
        (Some("isw_raid_member"), "isw_raid_member", isw(size)),
        (Some("ddf_raid_member"), "ddf_raid_member", ddf(size)),
        (
            Some("lsi_mega_raid_member"),
            "lsi_mega_raid_member",
            lsi(size),
        ),
        (Some("via_raid_member"), "via_raid_member", via(size)),
        (
            Some("silicon_medley_raid_member"),
            "silicon_medley_raid_member",
            silicon(size),
        ),
        (
            Some("nvidia_raid_member"),
            "nvidia_raid_member",
            nvidia(size),
        ),
        (
            Some("promise_fasttrack_raid_member"),
            "promise_fasttrack_raid_member",
            promise(size),
        ),
        (
            Some("hpt45x_raid_member"),
            "hpt45x_raid_member",
            hpt45x(size),
        ),
        (
            Some("hpt37x_raid_member"),
            "hpt37x_raid_member",
            hpt37x(size),
        ),
        (
            Some("adaptec_raid_member"),
            "adaptec_raid_member",
            adaptec(size),
        ),
        (
            Some("jmicron_raid_member"),
            "jmicron_raid_member",
            jmicron(size),
        ),
        (Some("linux_raid_member"), "md-1.2", md12(size)),
        (Some("crypto_LUKS"), "LUKS", luks1(size)),
        (Some("crypto_LUKS"), "LUKS", luks2(size, true)),
        // blkid -p (a "safe" probe) does not scan for LUKS2 secondary headers; wipefs does.
        (None, "LUKS", luks2(size, false)),
        (Some("LVM2_member"), "LVM2", lvm2(size)),
        (Some("ceph_bluestore"), "ceph_bluestore", bluestore(size)),
        (Some("vdo"), "vdo", vdo(size)),
        (Some("stratis"), "stratis", stratis(size)),
        (Some("drbd"), "drbd", drbd(size)),
        (
            Some("drbdproxy_datalog"),
            "drbdproxy_datalog",
            drbdproxy(size),
        ),
        (
            Some("DM_snapshot_cow"),
            "DM_snapshot_cow",
            snapshot_cow(size),
        ),
        (Some("DM_verity_hash"), "DM_verity_hash", verity(size)),
        (Some("DM_integrity"), "DM_integrity", integrity(size)),
        (
            Some("VMFS_volume_member"),
            "VMFS_volume_member",
            vmfs_volume(size),
        ),
        (Some("VMFS"), "VMFS", vmfs(size)),
        (Some("BitLocker"), "BitLocker", bitlocker(size)),
        // blkid ≥ 2.39 wants a ZFS nvlist label; the built-in detector looks for uberblocks.
        (None, "zfs", zfs_end_label(size)),
        (Some("reiserfs"), "reiserfs", reiserfs(size)),
        (Some("jfs"), "jfs", jfs(size)),
        (Some("gfs2"), "gfs2", gfs2(size)),
        (Some("ocfs2"), "ocfs2", ocfs2(size)),
        (Some("hfs"), "hfs", hfs(size)),
        (None, "hfsplus", hfsplus(size)),
        (Some("ufs"), "ufs", ufs(size)),
        (Some("nilfs2"), "nilfs2", nilfs2(size)),
        (Some("romfs"), "romfs", romfs(size)),
    ]
}
