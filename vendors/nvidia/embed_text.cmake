# cmake -DINPUT=FILE -DOUTPUT=FILE.cc -DHEADER=H -DNAME=NS::NAME -P embed_text.cmake
# writes a C++ source that defines `const char NAME[]`, declared in HEADER,
# holding INPUT's text.
file(READ "${INPUT}" text)
string(REGEX REPLACE "::[^:]*$" "" namespace "${NAME}")
string(REGEX REPLACE "^.*::" "" symbol "${NAME}")
file(WRITE "${OUTPUT}" "#include \"${HEADER}\"\n\nnamespace ${namespace} {\n\n"
     "const char ${symbol}[] = R\"embedded(${text})embedded\";\n\n}  // namespace ${namespace}\n")
