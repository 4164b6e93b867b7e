/* placeholder */
void fxt_agent_placeholder(void);
void fxt_agent_placeholder(void){}
