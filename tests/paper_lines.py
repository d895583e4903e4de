"""paper_lines - the command lines printed in Hourglass's paper (sections 3
and 5), as written: the unit tests parse them, the native tests run them."""

PAPER = {
    "3.1 three priorities": "-n 3 -d 5s -t 0 -p LOW -t 1 -p NORMAL -t 2 -p HIGH",
    "5.1 cpu": "-d 60s -n 10 -a -p NORMAL -w CPU",
    "5.1 cpu_yield": "-d 60s -n 10 -a -p NORMAL -w CPU_YIELD 0.9ms",
    "5.3 lat rtc": "-d 6m -n 1 -t 0 -p RTHIGH -w LAT 5.3ms -i RTC",
    "5.4 periodic rtc": "-d 20s -n 1 -t 0 -p RTHIGH -w PERIODIC 4ms 5ms -i RTC",
    "5.5 hr native": "-n 2 -t 0 -p RTMED -w PERIODIC 3ms 8ms -i HR -t 1 -p RTLOW -w PERIODIC 17ms 33ms -i NATIVE",
    "5.5 hr hr": "-n 2 -t 0 -p RTMED -w PERIODIC 3ms 8ms -i HR -t 1 -p RTLOW -w PERIODIC 17ms 33ms -i HR",
    "5.5 12ms": "-n 2 -t 0 -p RTMED -w PERIODIC 3ms 8ms -i HR -t 1 -p RTLOW -w PERIODIC 12ms 33ms -i NATIVE",
    "5.6 exact": "-n 2 -t 0 -w PERIODIC 3ms 8ms -rh 3ms 8ms -t 1 -w PERIODIC 17ms 33ms -rh 17ms 33ms",
    "5.6 over": "-n 2 -t 0 -w PERIODIC 3ms 8ms -rh 3.1ms 8ms -t 1 -w PERIODIC 17ms 33ms -rh 17.1ms 33ms",
}
