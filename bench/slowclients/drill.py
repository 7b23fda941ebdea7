# Slow-client drill, run by bench/slowclients.sh: N stalled clients
# (headers and one byte of a sign-in body) from 127.0.0.2-5, then five
# /healthz from 127.0.0.1, then how long the stalled sockets are held.
#   python3 bench/slowclients/drill.py PORT N
import socket, sys, time
addr = ("127.0.0.1", int(sys.argv[1])); n = int(sys.argv[2])
socks = []
for i in range(n):
    s = socket.socket(); s.bind((f"127.0.0.{2+i%4}", 0)); s.connect(addr)
    s.sendall(b"POST /signin HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\ne")
    socks.append(s)
t0 = time.time()
lat = []
for i in range(5):
    t = time.time(); h = socket.create_connection(addr, timeout=5)
    h.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    data = b""
    try:
        while True:
            b = h.recv(4096)
            if not b: break
            data += b
    except socket.timeout:
        data = b"no answer within 5 s"
    lat.append((time.time()-t)*1000); h.close()
    print("healthz", data.split(b"\r\n")[0].decode(), "%.1f ms" % lat[-1])
held = []
for s in socks:
    s.settimeout(180)
    try:
        while s.recv(4096): pass
    except Exception as e:
        print("error", e)
    held.append(time.time()-t0)
print(f"{n} stalled clients: healthz max {max(lat):.1f} ms; stalled sockets all closed {max(held):.1f} s after the first healthz")
