//! Windows: an AppContainer per server, inside the Job Object every server already joins.
//! **Not verified** (see ARCHITECTURE.md); filled in below.
