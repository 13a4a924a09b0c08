#!/bin/sh
# Print the text of the PDF given as the first argument.
exec pdftotext -layout "$1" -
