#!/bin/sh
cat >/dev/null; exec yes AAAAAAAA
