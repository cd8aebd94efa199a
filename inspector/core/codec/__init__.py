"""The JSON form of the result types, one codec for all (`json_record`: `JsonRecord`,
`json_field`). Sits beside `tflite`, above errors, events, progress and writing (it writes
floats through `writing.json_float`): imports only those and numpy."""
