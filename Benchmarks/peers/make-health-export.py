#!/usr/bin/env python3
"""Writes a synthetic Apple Health export of any size with known counts, and prints the counts as JSON.

    make-health-export.py OUT_DIR [--workouts N] [--points P] [--heart-rate M] [--size 1G] [--seed S]
                          [--ios16-dtd] [--no-dtd]

OUT_DIR/apple_health_export/ gets export.xml and workout-routes/route_*.gpx:

- the inline DTD in the shape of Apple's exports ("HealthKit Export Version: 14"); --ios16-dtd writes the
  malformed iOS 16 one instead (an unclosed VisionPrescription ATTLIST and a stray \\x0b), which expat-based
  tools and xmllint refuse; --no-dtd writes none (as trimmed test fixtures do);
- ExportDate, Me, then the records grouped by type as Apple writes them: heart rate (M, half inside a workout of
  the watch's source, a quarter outside every workout, a quarter inside workouts but from another source, which
  must not match), estimated effort scores for every third workout, then filler records of other types
  (step count, energy, distance) until the file reaches --size;
- N running and cycling workouts (dates -0800, heart-rate records +0000: the same instants with other offsets),
  each with MetadataEntry values with units, pause/resume and segment events, WorkoutStatistics, an iOS 16
  WorkoutActivity, a WorkoutRoute whose FileReference is absolute (even workouts, which also carry HealthKit's
  sync identifier and version) or relative (odd ones); every tenth workout has no route; every fifth has a
  manual effort score nested inside it;
- ActivitySummary elements at the end.

Python 3 standard library only. The output is the same for the same arguments.
"""

import argparse
import datetime as dt
import json
import os
import random
import sys
import uuid

DTD = """<!DOCTYPE HealthData [
<!-- HealthKit Export Version: 14 -->
<!ELEMENT HealthData (ExportDate,Me,(Record|Correlation|Workout|ActivitySummary|ClinicalRecord|Audiogram|VisionPrescription)*)>
<!ATTLIST HealthData
  locale CDATA #REQUIRED
>
<!ELEMENT ExportDate EMPTY>
<!ATTLIST ExportDate
  value CDATA #REQUIRED
>
<!ELEMENT Me EMPTY>
<!ATTLIST Me
  HKCharacteristicTypeIdentifierDateOfBirth                   CDATA #REQUIRED
  HKCharacteristicTypeIdentifierBiologicalSex                 CDATA #REQUIRED
  HKCharacteristicTypeIdentifierBloodType                     CDATA #REQUIRED
  HKCharacteristicTypeIdentifierFitzpatrickSkinType           CDATA #REQUIRED
  HKCharacteristicTypeIdentifierCardioFitnessMedicationsUse   CDATA #REQUIRED
>
<!ELEMENT Record ((MetadataEntry|HeartRateVariabilityMetadataList)*)>
<!ATTLIST Record
  type          CDATA #REQUIRED
  unit          CDATA #IMPLIED
  value         CDATA #IMPLIED
  sourceName    CDATA #REQUIRED
  sourceVersion CDATA #IMPLIED
  device        CDATA #IMPLIED
  creationDate  CDATA #IMPLIED
  startDate     CDATA #REQUIRED
  endDate       CDATA #REQUIRED
>
<!-- Note: Any Records that appear as children of a correlation also appear as top-level records in this document. -->
<!ELEMENT Correlation ((MetadataEntry|Record)*)>
<!ATTLIST Correlation
  type          CDATA #REQUIRED
  sourceName    CDATA #REQUIRED
  sourceVersion CDATA #IMPLIED
  device        CDATA #IMPLIED
  creationDate  CDATA #IMPLIED
  startDate     CDATA #REQUIRED
  endDate       CDATA #REQUIRED
>
<!ELEMENT Workout ((MetadataEntry|WorkoutEvent|WorkoutRoute|WorkoutStatistics)*)>
<!ATTLIST Workout
  workoutActivityType   CDATA #REQUIRED
  duration              CDATA #IMPLIED
  durationUnit          CDATA #IMPLIED
  totalDistance         CDATA #IMPLIED
  totalDistanceUnit     CDATA #IMPLIED
  totalEnergyBurned     CDATA #IMPLIED
  totalEnergyBurnedUnit CDATA #IMPLIED
  sourceName            CDATA #REQUIRED
  sourceVersion         CDATA #IMPLIED
  device                CDATA #IMPLIED
  creationDate          CDATA #IMPLIED
  startDate             CDATA #REQUIRED
  endDate               CDATA #REQUIRED
>
<!ELEMENT WorkoutActivity ((WorkoutEvent|WorkoutStatistics|MetadataEntry)*)>
<!ATTLIST WorkoutActivity
  uuid                  CDATA #REQUIRED
  startDate             CDATA #REQUIRED
  endDate               CDATA #IMPLIED
  duration              CDATA #IMPLIED
  durationUnit          CDATA #IMPLIED
>
<!ELEMENT WorkoutEvent EMPTY>
<!ATTLIST WorkoutEvent
  type                  CDATA #REQUIRED
  date                  CDATA #REQUIRED
  duration              CDATA #IMPLIED
  durationUnit          CDATA #IMPLIED
>
<!ELEMENT WorkoutStatistics EMPTY>
<!ATTLIST WorkoutStatistics
  type                  CDATA #REQUIRED
  startDate             CDATA #REQUIRED
  endDate               CDATA #REQUIRED
  average               CDATA #IMPLIED
  minimum               CDATA #IMPLIED
  maximum               CDATA #IMPLIED
  sum                   CDATA #IMPLIED
  unit                  CDATA #IMPLIED
>
<!ELEMENT WorkoutRoute ((MetadataEntry|FileReference)*)>
<!ATTLIST WorkoutRoute
  sourceName            CDATA #REQUIRED
  sourceVersion         CDATA #IMPLIED
  device                CDATA #IMPLIED
  creationDate          CDATA #IMPLIED
  startDate             CDATA #REQUIRED
  endDate               CDATA #REQUIRED
>
<!ELEMENT FileReference EMPTY>
<!ATTLIST FileReference
  path CDATA #REQUIRED
>
<!ELEMENT ActivitySummary EMPTY>
<!ATTLIST ActivitySummary
  dateComponents           CDATA #IMPLIED
  activeEnergyBurned       CDATA #IMPLIED
  activeEnergyBurnedGoal   CDATA #IMPLIED
  activeEnergyBurnedUnit   CDATA #IMPLIED
  appleMoveTime            CDATA #IMPLIED
  appleMoveTimeGoal        CDATA #IMPLIED
  appleExerciseTime        CDATA #IMPLIED
  appleExerciseTimeGoal    CDATA #IMPLIED
  appleStandHours          CDATA #IMPLIED
  appleStandHoursGoal      CDATA #IMPLIED
>
<!ELEMENT MetadataEntry EMPTY>
<!ATTLIST MetadataEntry
  key   CDATA #REQUIRED
  value CDATA #REQUIRED
>
<!-- Note: the quotes below hold ']' and '>' on purpose: a DTD reader must not end the subset there. -->
<!ENTITY routekitNote "a value with ] and > inside">
<!ELEMENT VisionPrescription ((RightEye|LeftEye|Attachment|MetadataEntry)*)>
<!ATTLIST VisionPrescription
  type             CDATA #REQUIRED
  dateIssued       CDATA #REQUIRED
  expirationDate   CDATA #IMPLIED
  brand            CDATA #IMPLIED
>
]>
"""

# iOS 16: the VisionPrescription ATTLIST is never closed, and a vertical tab sits in the subset.
DTD_IOS16 = DTD.replace(
    "  brand            CDATA #IMPLIED\n>\n]>", "  brand            CDATA #IMPLIED\n\x0b\n]>"
)

WATCH = "Test Watch"
PHONE = "Other Phone"
DEVICE = ("&lt;&lt;HKDevice: 0x283b1c0a0&gt;, name:Apple Watch, manufacturer:Apple Inc., model:Watch, "
          "hardware:Watch7,2, software:10.1&gt;")
WORKOUT_OFFSET = dt.timezone(dt.timedelta(hours=-8))


def fmt(t, tz):
    return t.astimezone(tz).strftime("%Y-%m-%d %H:%M:%S %z")


def parse_size(s):
    s = s.strip().upper()
    mult = 1
    for suffix, m in (("K", 1 << 10), ("M", 1 << 20), ("G", 1 << 30)):
        if s.endswith(suffix):
            mult = m
            s = s[:-1]
    return int(float(s) * mult)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out")
    p.add_argument("--workouts", type=int, default=20)
    p.add_argument("--points", type=int, default=600, help="route points per workout (one a second)")
    p.add_argument("--heart-rate", type=int, default=2000)
    p.add_argument("--size", default="0", help="pad with filler records to this many bytes (1G, 200M)")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--ios16-dtd", action="store_true")
    p.add_argument("--no-dtd", action="store_true")
    a = p.parse_args()

    rnd = random.Random(a.seed)
    root = os.path.join(a.out, "apple_health_export")
    routes_dir = os.path.join(root, "workout-routes")
    os.makedirs(routes_dir, exist_ok=True)
    utc = dt.timezone.utc
    epoch = dt.datetime(2023, 1, 2, 16, 0, 0, tzinfo=utc)  # 08:00 at -0800

    # Workouts: one a day, 08:00 local, long enough for their route points.
    length = max(a.points + 60, 1800)
    workouts = []
    for i in range(a.workouts):
        start = epoch + dt.timedelta(days=i)
        end = start + dt.timedelta(seconds=length)
        workouts.append((i, start, end))

    counts = {
        "workouts": a.workouts, "routes": 0, "route_points": 0, "heart_rate_records": 0,
        "heart_rate_in_workouts": 0, "heart_rate_other_source_in_workouts": 0, "heart_rate_outside": 0,
        "effort_scores": 0, "effort_scores_top_level": 0, "effort_scores_nested": 0, "records": 0,
        "filler_records": 0, "activity_summaries": 0,
    }

    # Heart rate: inside workouts (watch), outside any workout (watch), inside workouts from another source.
    hr = []
    for k in range(a.heart_rate):
        kind = k % 4
        if a.workouts == 0:
            kind = 1
        if kind in (0, 2):
            _, s, e = workouts[rnd.randrange(a.workouts)]
            t = s + dt.timedelta(seconds=rnd.randrange(1, length - 1))
            src = WATCH
            counts["heart_rate_in_workouts"] += 1
        elif kind == 1:
            day = rnd.randrange(max(a.workouts, 1))
            t = epoch + dt.timedelta(days=day, hours=4, seconds=rnd.randrange(0, 8 * 3600))
            src = WATCH
            counts["heart_rate_outside"] += 1
        else:
            _, s, e = workouts[rnd.randrange(a.workouts)]
            t = s + dt.timedelta(seconds=rnd.randrange(1, length - 1))
            src = PHONE
            counts["heart_rate_other_source_in_workouts"] += 1
        hr.append((t, src, 60 + rnd.randrange(120)))
    hr.sort(key=lambda x: x[0])
    counts["heart_rate_records"] = len(hr)

    xml_path = os.path.join(root, "export.xml")
    target = parse_size(a.size)
    with open(xml_path, "w", encoding="utf-8", newline="\n") as f:
        f.write('<?xml version="1.0" encoding="UTF-8"?>\n')
        if not a.no_dtd:
            f.write(DTD_IOS16 if a.ios16_dtd else DTD)
        f.write('<HealthData locale="en_US">\n')
        f.write(' <ExportDate value="2024-01-01 12:00:00 -0800"/>\n')
        f.write(' <Me HKCharacteristicTypeIdentifierDateOfBirth="1990-01-01" '
                'HKCharacteristicTypeIdentifierBiologicalSex="HKBiologicalSexNotSet" '
                'HKCharacteristicTypeIdentifierBloodType="HKBloodTypeNotSet" '
                'HKCharacteristicTypeIdentifierFitzpatrickSkinType="HKFitzpatrickSkinTypeNotSet" '
                'HKCharacteristicTypeIdentifierCardioFitnessMedicationsUse="None"/>\n')
        buf = []
        for t, src, v in hr:
            d = fmt(t, utc)
            device = f' device="{DEVICE}"' if src == WATCH else ""
            buf.append(
                f' <Record type="HKQuantityTypeIdentifierHeartRate" sourceName="{src}" sourceVersion="10.1"'
                f'{device} unit="count/min" creationDate="{d}" startDate="{d}" endDate="{d}" value="{v}">\n'
                f'  <MetadataEntry key="HKMetadataKeyHeartRateMotionContext" value="0"/>\n </Record>\n')
        f.write("".join(buf))
        counts["records"] += len(hr)
        # Estimated effort scores, top level, for every third workout.
        for i, s, e in workouts:
            if i % 3 == 0:
                f.write(
                    f' <Record type="HKQuantityTypeIdentifierEstimatedWorkoutEffortScore" sourceName="{WATCH}" '
                    f'unit="appleEffortScore" creationDate="{fmt(e, WORKOUT_OFFSET)}" '
                    f'startDate="{fmt(s, WORKOUT_OFFSET)}" endDate="{fmt(e, WORKOUT_OFFSET)}" '
                    f'value="{1 + i % 10}"/>\n')
                counts["records"] += 1
                counts["effort_scores"] += 1
                counts["effort_scores_top_level"] += 1
        # Workouts and their routes are written to a side buffer first: filler goes before them.
        wbuf = []
        for i, s, e in workouts:
            typ = "HKWorkoutActivityTypeRunning" if i % 2 == 0 else "HKWorkoutActivityTypeCycling"
            ws, we = fmt(s, WORKOUT_OFFSET), fmt(e, WORKOUT_OFFSET)
            pause = s + dt.timedelta(seconds=300)
            resume = pause + dt.timedelta(seconds=30)
            w = [f' <Workout workoutActivityType="{typ}" duration="{length / 60:.4f}" durationUnit="min" '
                 f'sourceName="{WATCH}" sourceVersion="10.1" device="{DEVICE}" creationDate="{we}" '
                 f'startDate="{ws}" endDate="{we}">\n',
                 '  <MetadataEntry key="HKIndoorWorkout" value="0"/>\n',
                 '  <MetadataEntry key="HKElevationAscended" value="6575 cm"/>\n',
                 '  <MetadataEntry key="HKWeatherTemperature" value="61.9694 degF"/>\n',
                 f'  <WorkoutEvent type="HKWorkoutEventTypePause" date="{fmt(pause, WORKOUT_OFFSET)}"/>\n',
                 f'  <WorkoutEvent type="HKWorkoutEventTypeResume" date="{fmt(resume, WORKOUT_OFFSET)}"/>\n',
                 f'  <WorkoutEvent type="HKWorkoutEventTypeSegment" date="{ws}" duration="5" durationUnit="min"/>\n',
                 f'  <WorkoutActivity uuid="{uuid.UUID(int=rnd.getrandbits(128))}" startDate="{ws}" '
                 f'endDate="{we}" duration="{length / 60:.4f}" durationUnit="min">\n',
                 f'   <WorkoutStatistics type="HKQuantityTypeIdentifierHeartRate" startDate="{ws}" endDate="{we}" '
                 'average="130.5" minimum="87" maximum="171" unit="count/min"/>\n',
                 '  </WorkoutActivity>\n',
                 f'  <WorkoutStatistics type="HKQuantityTypeIdentifierActiveEnergyBurned" startDate="{ws}" '
                 f'endDate="{we}" sum="655.465" unit="kcal"/>\n']
            if i % 5 == 0:
                w.append(f'  <Record type="HKQuantityTypeIdentifierWorkoutEffortScore" sourceName="Fitness" '
                         f'unit="appleEffortScore" creationDate="{we}" startDate="{ws}" endDate="{we}" '
                         f'value="{1 + (i * 7) % 10}"/>\n')
                counts["effort_scores"] += 1
                counts["effort_scores_nested"] += 1
            if i % 10 != 9:
                name = f"route_{s.astimezone(WORKOUT_OFFSET).strftime('%Y-%m-%d_%-I.%M%p').lower()}_{i}.gpx"
                ref = f"/workout-routes/{name}" if i % 2 == 0 else f"workout-routes/{name}"
                w.append(f'  <WorkoutRoute sourceName="{WATCH}" sourceVersion="10.1" creationDate="{we}" '
                         f'startDate="{ws}" endDate="{we}">\n')
                if i % 2 == 0:
                    w.append('   <MetadataEntry key="HKMetadataKeySyncVersion" value="2"/>\n')
                    w.append(f'   <MetadataEntry key="HKMetadataKeySyncIdentifier" '
                             f'value="{uuid.UUID(int=rnd.getrandbits(128))}"/>\n')
                w.append(f'   <FileReference path="{ref}"/>\n  </WorkoutRoute>\n')
                write_route(os.path.join(routes_dir, name), s, a.points, rnd, i)
                counts["routes"] += 1
                counts["route_points"] += a.points
            w.append(' </Workout>\n')
            wbuf.append("".join(w))
        tail_workouts = "".join(wbuf)
        summaries = "".join(
            f' <ActivitySummary dateComponents="2023-01-{1 + d:02d}" activeEnergyBurned="590.252" '
            f'activeEnergyBurnedGoal="630" activeEnergyBurnedUnit="kcal" appleExerciseTime="68" '
            f'appleExerciseTimeGoal="30" appleStandHours="13" appleStandHoursGoal="12"/>\n' for d in range(28))
        counts["activity_summaries"] = 28
        tail = tail_workouts + summaries + "</HealthData>\n"
        # Filler up to the target size, grouped by type.
        written = f.tell()
        need = target - written - len(tail.encode("utf-8"))
        types = [("HKQuantityTypeIdentifierStepCount", "count"),
                 ("HKQuantityTypeIdentifierActiveEnergyBurned", "kcal"),
                 ("HKQuantityTypeIdentifierDistanceWalkingRunning", "km"),
                 ("HKQuantityTypeIdentifierBasalEnergyBurned", "kcal")]
        if need > 0:
            per_type = need // len(types)
            base = dt.datetime(2019, 1, 1, tzinfo=utc)
            for typ, unit in types:
                done = 0
                n = 0
                chunk = []
                while done < per_type:
                    t = base + dt.timedelta(seconds=n * 97)
                    d = fmt(t, WORKOUT_OFFSET)
                    rec = (f' <Record type="{typ}" sourceName="{PHONE}" sourceVersion="17.1" unit="{unit}" '
                           f'creationDate="{d}" startDate="{d}" endDate="{d}" value="{n % 1000}"/>\n')
                    chunk.append(rec)
                    done += len(rec)
                    n += 1
                    if len(chunk) >= 10000:
                        f.write("".join(chunk))
                        chunk = []
                f.write("".join(chunk))
                counts["records"] += n
                counts["filler_records"] += n
        f.write(tail)
    counts["bytes"] = os.path.getsize(xml_path)
    counts["export"] = root
    print(json.dumps(counts, sort_keys=True))


def write_route(path, start, points, rnd, i):
    lat, lon = 37.77 + (i % 7) * 0.01, -122.42 + (i % 5) * 0.01
    out = ['<?xml version="1.0" encoding="UTF-8"?>\n',
           '<gpx version="1.1" creator="Apple Health Export" xmlns="http://www.topografix.com/GPX/1/1">\n',
           ' <metadata><time>2024-01-01T20:00:00Z</time></metadata>\n <trk><name>Route</name><trkseg>\n']
    for k in range(points):
        lat += (rnd.random() - 0.5) * 1e-4
        lon += (rnd.random() - 0.5) * 1e-4
        t = (start + dt.timedelta(seconds=k)).strftime("%Y-%m-%dT%H:%M:%SZ")
        out.append(f'  <trkpt lon="{lon:.6f}" lat="{lat:.6f}"><ele>{10 + k % 7:.6f}</ele><time>{t}</time>'
                   f'<extensions><speed>2.5</speed><course>143.78</course><hAcc>1.4</hAcc><vAcc>1.2</vAcc>'
                   f'</extensions></trkpt>\n')
    out.append(' </trkseg></trk>\n</gpx>\n')
    with open(path, "w", encoding="utf-8") as f:
        f.write("".join(out))


if __name__ == "__main__":
    sys.exit(main())
