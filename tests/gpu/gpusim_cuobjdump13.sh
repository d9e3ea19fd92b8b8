#!/bin/bash
# gpusim_cuobjdump13.sh: the cuobjdump GPGPU-Sim calls, handing it CUDA 13's PTX of the source each embedded PTX came from (as ../shared/gpusim/ptx13/cuobjdump, for several .cu files).
# The kit's wrapper gives every PTX of a binary the one file APSMPI_PTX_OVERRIDE names; the
# plugin holds two, codec_kernels.cu's and codec_mx_kernels.cu's, whose kernels would then be
# missing. Here APSMPI_PTX_OVERRIDE is a folder holding SOURCE.ptx for each .cu: "-xptx NAME
# BINARY" extracts the embedded (CUDA 11.8) PTX, finds its source from the kernels' mangled
# names (an anonymous namespace names its file: ..._16_codec_kernels_cu_...), and writes that
# source's CUDA 13 PTX instead (the mangled names are the same). A PTX of another source,
# and a plain file in APSMPI_PTX_OVERRIDE, behave as the kit's wrapper.
real="${SIM_CUDA:?SIM_CUDA: the CUDA 11.8 tree}/bin/cuobjdump"
if [ "$1" = "-xptx" ] && [ -n "${APSMPI_PTX_OVERRIDE:-}" ]; then
    if [ -f "$APSMPI_PTX_OVERRIDE" ]; then
        cp "$APSMPI_PTX_OVERRIDE" "$2"
        exit 0
    fi
    "$real" "$@" || exit
    for ptx in "$APSMPI_PTX_OVERRIDE"/*.ptx; do
        src=$(basename "$ptx" .ptx)
        if grep -q "_${src}_cu_" "$2"; then
            cp "$ptx" "$2"
            exit 0
        fi
    done
    exit 0
fi
exec "$real" "$@"
