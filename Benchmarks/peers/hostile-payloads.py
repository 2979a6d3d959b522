#!/usr/bin/env python3
"""Writes the hostile payloads of the hardening issue into a folder, made here (never committed):

  tcx-padded.tcx.gz    a TCX whose Track holds 500 MiB of spaces between two trackpoints (about 0.5 MB gzip)
  gpx-padded.gpx.gz    a GPX whose trkseg holds 1.9 GiB of spaces between two points (about 2 MB gzip)
  big-entry.zip        a zip of one GPX entry of 1000 MiB (whitespace with a little noise, about 130x)
  health-event.zip     an Apple Health export.zip whose WorkoutEvent lasts 1e300 minutes (a trap before)
  zip64-2p63.zip       120 bytes: a zip64 size of 2^63 (a trap before)
  fit-big.fit.gz       a FIT activity of 500 MiB (262 million heart-rate records without a time, about 0.5 MB gzip)
  gz-entry.zip         a zip whose small entry activities/big.gpx.gz is gpx-padded.gpx.gz (1.9 GiB inflated)
  fit-gz-entry.zip     a zip whose small entry activities/big.fit.gz is fit-big.fit.gz

Usage: hostile-payloads.py FOLDER
"""
import gzip, os, random, struct, sys, zipfile, zlib

out = sys.argv[1] if len(sys.argv) > 1 else "."
os.makedirs(out, exist_ok=True)
MIB = 1 << 20

def padded_gzip(path, head, tail, pad_bytes):
    block = b" " * MIB
    with gzip.open(path, "wb", compresslevel=6) as f:
        f.write(head)
        for _ in range(pad_bytes // MIB):
            f.write(block)
        f.write(tail)

tp = lambda s, lat: (b'<Trackpoint><Time>2024-05-01T06:00:%02dZ</Time><Position><LatitudeDegrees>%s</LatitudeDegrees>'
                     b'<LongitudeDegrees>8.5</LongitudeDegrees></Position></Trackpoint>' % (s, lat))
padded_gzip(
    os.path.join(out, "tcx-padded.tcx.gz"),
    b'<?xml version="1.0"?><TrainingCenterDatabase xmlns="http://www.garmin.com/xmlschemas/TrainingCenterDatabase/v2">'
    b'<Activities><Activity Sport="Running"><Id>2024-05-01T06:00:00Z</Id><Lap StartTime="2024-05-01T06:00:00Z">'
    b'<TotalTimeSeconds>2</TotalTimeSeconds><Track>' + tp(1, b"47.1"),
    tp(2, b"47.2") + b"</Track></Lap></Activity></Activities></TrainingCenterDatabase>", 500 * MIB)

pt = lambda s, lat: b'<trkpt lat="%s" lon="8.5"><time>2024-05-01T06:00:%02dZ</time></trkpt>' % (lat, s)
padded_gzip(
    os.path.join(out, "gpx-padded.gpx.gz"),
    b'<?xml version="1.0"?><gpx version="1.1" creator="t" xmlns="http://www.topografix.com/GPX/1/1"><trk><trkseg>'
    + pt(1, b"47.1"), pt(2, b"47.2") + b"</trkseg></trk></gpx>", 1900 * MIB)

# A 1000 MiB GPX entry: spaces with one random whitespace byte in 256, so that it deflates about 130x (under the 200x
# ratio check).
rng = random.Random(1)
noise = bytearray(b" " * MIB)
for i in range(0, MIB, 256):
    noise[i + rng.randrange(256)] = rng.choice(b"\t\n\r")
noise = bytes(noise)
with zipfile.ZipFile(os.path.join(out, "big-entry.zip"), "w", zipfile.ZIP_DEFLATED) as z:
    with z.open("activities/big.gpx", "w", force_zip64=True) as f:
        f.write(b'<?xml version="1.0"?><gpx version="1.1" creator="t" xmlns="http://www.topografix.com/GPX/1/1">'
                b'<trk><trkseg>' + pt(1, b"47.1"))
        for _ in range(1000):
            f.write(noise)
        f.write(pt(2, b"47.2") + b"</trkseg></trk></gpx>")

health = b'''<?xml version="1.0" encoding="UTF-8"?>
<HealthData locale="en_US">
 <Workout workoutActivityType="HKWorkoutActivityTypeRunning" duration="20" durationUnit="min" sourceName="W"
  startDate="2024-03-01 09:00:00 +0100" endDate="2024-03-01 09:20:00 +0100">
  <WorkoutEvent type="HKWorkoutEventTypeSegment" date="2024-03-01 09:05:00 +0100" duration="1e300" durationUnit="min"/>
 </Workout>
</HealthData>
'''
with zipfile.ZipFile(os.path.join(out, "health-event.zip"), "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("apple_health_export/export.xml", health)

# 120 bytes: one empty entry whose zip64 extra field says 2^63 bytes uncompressed.
name = b"a.gpx"
extra = struct.pack("<HHQ", 1, 8, 1 << 63)
local = struct.pack("<IHHHHHIIIHH", 0x04034B50, 45, 0, 0, 0, 0x21, 0, 0, 0, len(name), 0) + name
central = struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 45, 45, 0, 0, 0, 0x21, 0, 0, 0xFFFFFFFF, len(name),
                      len(extra), 0, 0, 0, 0, 0) + name + extra
end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 1, 1, len(central), len(local), 0)
with open(os.path.join(out, "zip64-2p63.zip"), "wb") as f:
    f.write(local + central + end)

# FIT: a header, a file_id (activity), a record definition with one uint8 field (heart rate), then 2-byte records.
# The file CRC is left 0 (the decoder warns and reads on); computing it in Python over 500 MiB takes minutes.
def fit_header(data_size):
    return struct.pack("<BBHI4sH", 14, 0x20, 2132, data_size, b".FIT", 0)
file_id = bytes([0x40, 0, 0]) + struct.pack("<HB", 0, 1) + bytes([0, 1, 0x00]) + bytes([0x00, 4])
record_def = bytes([0x41, 0, 0]) + struct.pack("<HB", 20, 1) + bytes([3, 1, 0x02])
records = bytes([0x01, 140]) * (MIB // 2)
with gzip.open(os.path.join(out, "fit-big.fit.gz"), "wb", compresslevel=6) as f:
    body_size = len(file_id) + len(record_def) + 500 * MIB
    f.write(fit_header(body_size) + file_id + record_def)
    for _ in range(500):
        f.write(records)
    f.write(b"\0\0")

for archive, entry, payload in (("gz-entry.zip", "activities/big.gpx.gz", "gpx-padded.gpx.gz"),
                                ("fit-gz-entry.zip", "activities/big.fit.gz", "fit-big.fit.gz")):
    with zipfile.ZipFile(os.path.join(out, archive), "w", zipfile.ZIP_STORED) as z:
        with open(os.path.join(out, payload), "rb") as g:
            z.writestr(entry, g.read())

for n in sorted(os.listdir(out)):
    print(f"{n}\t{os.path.getsize(os.path.join(out, n))} bytes")
