"""The review inbox's pure rules: its line format (`inbox_format`), which agent stores wait for
a person (`policy`) and the instruction-like payload detector (`instruction_like`)."""
