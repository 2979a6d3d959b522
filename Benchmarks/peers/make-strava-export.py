#!/usr/bin/env python3
"""A synthetic Strava bulk export: activities.csv plus N activity files, as Strava mails it (stdlib only).

    make-strava-export.py N OUT.zip [--points P] [--manual M] [--folder]

Each activity is a realistic GPX track of P points (default 3,600: an hour at 1 Hz) from the shared generator
(../shared/peers/make_gpx.py, seed = its number), stored gzip-compressed as activities/<file id>.gpx.gz, as
Strava stores uploads; M more rows are manual activities (no file). activities.csv has the current English
header with its repeated Distance and Elapsed Time columns. --folder writes the unpacked folder instead of a zip.
Prints the expected counts as JSON on standard output.
"""
import argparse
import gzip
import io
import json
import os
import sys
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', '..', '..', 'shared', 'peers'))
import make_gpx  # noqa: E402

HEADER = ('Activity ID,Activity Date,Activity Name,Activity Type,Activity Description,Elapsed Time,Distance,'
          'Max Heart Rate,Relative Effort,Commute,Activity Private Note,Activity Gear,Filename,Athlete Weight,'
          'Bike Weight,Elapsed Time,Moving Time,Distance,Max Speed')
MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec']


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('n', type=int)
    ap.add_argument('out')
    ap.add_argument('--points', type=int, default=3600)
    ap.add_argument('--manual', type=int, default=0)
    ap.add_argument('--folder', action='store_true')
    a = ap.parse_args()
    files = {}
    rows = [HEADER]
    for i in range(a.n):
        text = io.StringIO()
        make_gpx.generate(a.points, 1000 + i, text)
        name = 'activities/%d.gpx.gz' % (9000000 + i)
        files[name] = gzip.compress(text.getvalue().encode('utf-8'), mtime=0)
        day = 1 + i % 28
        rows.append('%d,"%s %d, 2023, 7:00:00 AM","Run %d",Run,,%d,10.0,,,false,,,%s,,,%d.0,%d.0,10000.0,4' % (
            100000 + i, MONTHS[i % 12], day, i, a.points, name, a.points, a.points))
    for j in range(a.manual):
        rows.append('%d,"Jan 1, 2024, 6:00:00 PM","Yoga %d",Yoga,,3600,0,,,false,,,,,,3600.0,3600.0,0,0' % (
            200000 + j, j))
    files['activities.csv'] = ('\n'.join(rows) + '\n').encode('utf-8')
    if a.folder:
        for name, data in files.items():
            path = os.path.join(a.out, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, 'wb') as f:
                f.write(data)
    else:
        with zipfile.ZipFile(a.out, 'w', zipfile.ZIP_STORED) as z:
            for name, data in files.items():
                z.writestr('export_1/' + name, data)
    print(json.dumps({'activities': a.n, 'manual': a.manual, 'points': a.n * a.points}))


if __name__ == '__main__':
    main()
