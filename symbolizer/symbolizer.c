/* placeholder */
int fxt_sym_placeholder;
