#!/bin/sh
echo docs
