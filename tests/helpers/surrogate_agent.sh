#!/bin/sh
cat >/dev/null; printf '"bad \\ud800 text"\n'
