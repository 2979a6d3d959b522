#!/usr/bin/env python3
"""Takes docs/web-view.png: the sample routes in a new store, `routekit serve` on it, headless Chromium through
chromedriver (WebDriver), a read token entered, the lunch ride opened once its heart-rate profile is drawn.

    scripts/screenshot-web-view.py OUT.png [ROUTEKIT]

ROUTEKIT: a routekit built with the Server trait (default .build-full/debug/routekit). Needs chromium and
chromium-driver (Debian's packages)."""
import json, subprocess, time, urllib.request, base64, os, sys, socket, tempfile
ROOT=os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RK=sys.argv[2] if len(sys.argv)>2 else os.path.join(ROOT,".build-full/debug/routekit")
store=os.path.join(tempfile.mkdtemp(),"store.sqlite")
for f in [store, store+"-wal", store+"-shm"]:
    if os.path.exists(f): os.remove(f)
subprocess.run([RK,"import","--store",store,os.path.join(ROOT,"sample-routes")],check=True,capture_output=True)
tok=subprocess.run([RK,"tokens","create","--store",store,"--source","viewer","--scope","read","--name","shot"],check=True,capture_output=True,text=True).stdout.strip().split()[-1]
def free():
    s=socket.socket(); s.bind(("127.0.0.1",0)); p=s.getsockname()[1]; s.close(); return p
port=free(); dport=free()
srv=subprocess.Popen([RK,"serve","--store",store,"--port",str(port)],stdout=subprocess.DEVNULL,stderr=subprocess.DEVNULL)
drv=subprocess.Popen(["chromedriver",f"--port={dport}"],stdout=subprocess.DEVNULL,stderr=subprocess.DEVNULL)
time.sleep(1.5)
def call(method,path,body=None):
    req=urllib.request.Request(f"http://127.0.0.1:{dport}{path}",method=method,data=None if body is None else json.dumps(body).encode(),headers={"Content-Type":"application/json"})
    return json.load(urllib.request.urlopen(req))["value"]
try:
    sess=call("POST","/session",{"capabilities":{"alwaysMatch":{"browserName":"chrome","goog:chromeOptions":{"args":["--headless=new","--no-sandbox","--window-size=1280,1280"]}}}})["sessionId"]
    S=f"/session/{sess}"
    call("POST",S+"/url",{"url":f"http://127.0.0.1:{port}/"})
    js=lambda src: call("POST",S+"/execute/sync",{"script":src,"args":[]})
    js(f"document.getElementById('token').value={json.dumps(tok)}; document.getElementById('token-form').requestSubmit();")
    for _ in range(100):
        if js("return document.querySelectorAll('#workouts li[data-workout]').length")>=3: break
        time.sleep(0.1)
    js("[...document.querySelectorAll('#workouts li[data-workout]')].find(li=>li.querySelector('.name').textContent.startsWith('Lunch ride')).querySelector('button').click()")
    for _ in range(100):
        if js("const p=document.querySelector('#heart-rate polyline.line'); return !!p && !document.getElementById('heart-rate-figure').hidden"): break
        time.sleep(0.1)
    time.sleep(0.5)
    png=base64.b64decode(call("GET",S+"/screenshot"))
    open(sys.argv[1],"wb").write(png)
    call("DELETE",S)
finally:
    srv.terminate(); drv.kill()
print("ok", len(png))
