// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0
// Build: gcc -O2 -o udppp udppp.c -lpthread. Run: ./udppp FLAGS, FLAGS from K (connected), S (sendmmsg),
// R (recvmmsg), 1 (one slot), M (recvmsg), C (all three control messages), E/T/G (IP_RECVTOS /
// SO_TIMESTAMPNS / UDP_GRO alone), P / F (with M: poll for a datagram with recv(MSG_PEEK) / ioctl
// FIONREAD before each recvmsg); no flags: unconnected sendto and recv.
// UDP ping-pong on loopback, two spinning threads, 64 B messages, non-blocking reads: "K" gives
// Aeron's calls (connected send/recv), "SRC" the native transport's before 2026-12-05 (sendmmsg
// with an address, recvmmsg of 32 slots with IP_RECVTOS, SO_TIMESTAMPNS and UDP_GRO control
// messages). Prints the p50 and p99 round trip in us (docs/native-transport.md).
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#ifndef UDP_GRO
#define UDP_GRO 104
#endif
static int mode_mmsg; static int N = 200000; static int opt_recvmsg, opt_tos, opt_ts, opt_gro; static int opt_send_mmsg, opt_cmsg, opt_slots=32, opt_recvmmsg, opt_connect;
static int opt_peek, opt_ionread;
static int sa, sb; static struct sockaddr_in aa, ab;
static long now_ns(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1000000000L+t.tv_nsec;}
static int mk(struct sockaddr_in *a){int s=socket(AF_INET,SOCK_DGRAM,0);a->sin_family=AF_INET;a->sin_addr.s_addr=htonl(0x7f000001);a->sin_port=0;bind(s,(void*)a,sizeof *a);socklen_t l=sizeof *a;getsockname(s,(void*)a,&l);
 {int one=1; if(opt_cmsg||opt_tos) setsockopt(s,IPPROTO_IP,IP_RECVTOS,&one,4); if(opt_cmsg||opt_ts) setsockopt(s,SOL_SOCKET,SO_TIMESTAMPNS,&one,4); if(opt_cmsg||opt_gro) setsockopt(s,IPPROTO_UDP,UDP_GRO,&one,4);}return s;}
#define SLOTS 32
struct rx{struct mmsghdr m[SLOTS];struct iovec iov[SLOTS];char buf[SLOTS][2048];char ctl[SLOTS][128];struct sockaddr_in name[SLOTS];};
static int recv1(int s, struct rx *r, char *out){
 if(opt_recvmsg){for(;;){if(opt_peek){char z; if(recv(s,&z,0,MSG_PEEK|MSG_DONTWAIT)<0) continue;} if(opt_ionread){int q=0; ioctl(s,FIONREAD,&q); if(q==0) continue;}r->iov[0].iov_base=r->buf[0];r->iov[0].iov_len=2048;struct msghdr h;memset(&h,0,sizeof h);h.msg_iov=&r->iov[0];h.msg_iovlen=1;h.msg_name=&r->name[0];h.msg_namelen=sizeof r->name[0];h.msg_control=r->ctl[0];h.msg_controllen=128;ssize_t n=recvmsg(s,&h,MSG_DONTWAIT);if(n>0){memcpy(out,r->buf[0],n);return n;}}}
 if(!opt_recvmmsg){for(;;){ssize_t n=recv(s,out,2048,MSG_DONTWAIT); if(n>0) return n;}}
 for(;;){for(int i=0;i<opt_slots;i++){r->iov[i].iov_base=r->buf[i];r->iov[i].iov_len=2048;r->m[i].msg_hdr.msg_iov=&r->iov[i];r->m[i].msg_hdr.msg_iovlen=1;r->m[i].msg_hdr.msg_name=&r->name[i];r->m[i].msg_hdr.msg_namelen=sizeof r->name[i];r->m[i].msg_hdr.msg_control=r->ctl[i];r->m[i].msg_hdr.msg_controllen=128;}
  int n=recvmmsg(s,r->m,opt_slots,MSG_DONTWAIT,NULL); if(n>0){memcpy(out,r->buf[0],r->m[0].msg_len);return r->m[0].msg_len;}}
}
static void send1(int s, struct sockaddr_in *to, char *buf, int len){
 if(!opt_send_mmsg){if(opt_connect) send(s,buf,len,0); else sendto(s,buf,len,0,(void*)to,sizeof *to);return;}
 struct iovec iov={buf,len};struct mmsghdr m;memset(&m,0,sizeof m);if(!opt_connect){m.msg_hdr.msg_name=to;m.msg_hdr.msg_namelen=sizeof *to;}m.msg_hdr.msg_iov=&iov;m.msg_hdr.msg_iovlen=1;sendmmsg(s,&m,1,0);
}
static void *echo(void *x){struct rx *r=malloc(sizeof *r);char b[2048];for(int i=0;i<N;i++){int n=recv1(sb,r,b);send1(sb,&aa,b,n);}return 0;}
static int cmp(const void*a,const void*b){long x=*(long*)a,y=*(long*)b;return x<y?-1:x>y;}
int main(int c,char**v){const char*f=c>1?v[1]:"";opt_send_mmsg=!!strchr(f,'S');opt_cmsg=!!strchr(f,'C');opt_recvmmsg=!!strchr(f,'R');opt_connect=!!strchr(f,'K');opt_recvmsg=!!strchr(f,'M');opt_tos=!!strchr(f,'E');opt_ts=!!strchr(f,'T');opt_gro=!!strchr(f,'G');if(strchr(f,'1'))opt_slots=1;opt_peek=!!strchr(f,'P');opt_ionread=!!strchr(f,'F');mode_mmsg=opt_recvmmsg;sa=mk(&aa);sb=mk(&ab);if(opt_connect){connect(sa,(void*)&ab,sizeof ab);connect(sb,(void*)&aa,sizeof aa);}
 pthread_t t;pthread_create(&t,0,echo,0);struct rx *r=malloc(sizeof *r);char b[2048];memset(b,7,64);long *rt=malloc(N*sizeof(long));
 for(int i=0;i<N;i++){long t0=now_ns();send1(sa,&ab,b,64);recv1(sa,r,b);rt[i]=now_ns()-t0;}
 pthread_join(t,0);qsort(rt+N/4,N-N/4,sizeof(long),cmp);int m=N-N/4;printf("[%s] p50 %.2f us p99 %.2f us\n",f,rt[N/4+m/2]/1000.0,rt[N/4+m*99/100]/1000.0);return 0;}
