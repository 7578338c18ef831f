#!/bin/sh
wc -l
