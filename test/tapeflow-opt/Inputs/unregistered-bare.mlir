garbage {{{
